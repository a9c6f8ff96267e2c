//go:build tools

// Package tools pins the grpcurl command for `go build`.
package tools

import _ "github.com/fullstorydev/grpcurl/cmd/grpcurl"
