//go:build tools

// Package tools pins the Kubernetes commands the tests run so they build from this module: the
// control plane (kube-apiserver, kubectl) and, for the end-to-end tests' one-node cluster, the
// controller-manager, the scheduler, the kubelet and kube-proxy (same module, same version).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
