//go:build tools

// Package tools pins etcd's server module so `go build go.etcd.io/etcd/server/v3` resolves
// from this module's go.mod/go.sum.
package tools

import _ "go.etcd.io/etcd/server/v3"
