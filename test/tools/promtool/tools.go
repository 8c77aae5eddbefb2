//go:build tools

// Package tools pins Prometheus' promtool and server so `go build github.com/prometheus/prometheus/cmd/…`
// resolves from this module's go.mod/go.sum.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
