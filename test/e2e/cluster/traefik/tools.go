//go:build tools

// Package tools pins the Traefik ingress controller so it builds from this module. Traefik's own go.mod
// replaces three forks; a dependency's replaces are ignored, so go.mod repeats them here.
package tools

import (
	_ "github.com/traefik/traefik/v3/cmd/traefik"
)
