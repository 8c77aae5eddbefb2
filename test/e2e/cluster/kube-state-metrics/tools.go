//go:build tools

// Package tools pins kube-state-metrics so it builds from this module: the Go module proxy reachable
// here serves the pinned release but not the module's version list, which `go install pkg@version`
// reads (to check for a deprecation) and then fails on.
package tools

import (
	_ "k8s.io/kube-state-metrics/v2"
)
