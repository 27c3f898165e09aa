// Package kubeconfig writes the admin kubeconfig, so that
// "kubectl --kubeconfig <data-dir>/admin.kubeconfig" works with nothing else
// set.
package kubeconfig
