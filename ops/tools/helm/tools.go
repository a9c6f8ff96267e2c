//go:build tools

// Package tools pins the helm command for `go build` (ops/helm: lint, template; the chart's tests).
package tools

import _ "helm.sh/helm/v3/cmd/helm"
