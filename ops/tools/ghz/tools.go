//go:build tools

// Package tools pins the ghz command for `go build`.
package tools

import _ "github.com/bojand/ghz/cmd/ghz"
