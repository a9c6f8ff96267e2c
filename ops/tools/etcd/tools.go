//go:build tools

// Package tools pins the etcd server command for `go build`.
package tools

import _ "go.etcd.io/etcd/server/v3"
