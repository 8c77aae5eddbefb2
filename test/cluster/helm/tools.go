//go:build tools

// Package tools pins the helm command so it builds from this module with checksums in go.sum.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
