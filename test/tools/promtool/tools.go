//go:build tools

// Package tools pins Prometheus' promtool so `go build github.com/prometheus/prometheus/cmd/promtool`
// resolves from this module's go.mod/go.sum.
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
