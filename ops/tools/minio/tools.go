//go:build tools

// Package tools pins the MinIO server command for `go build`.
package tools

import _ "github.com/minio/minio"
