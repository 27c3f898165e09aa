// Package serviceaccounttoken is kube-controller-manager's
// serviceaccount-token-controller: it fills in legacy
// kubernetes.io/service-account-token Secrets (token, ca.crt, namespace)
// and deletes those whose service account is gone.
package serviceaccounttoken
