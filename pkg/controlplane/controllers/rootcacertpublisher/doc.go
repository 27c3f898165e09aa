// Package rootcacertpublisher is the root-ca-certificate-publisher-controller
// of kube-controller-manager, run in-process: every active namespace has a
// ConfigMap "kube-root-ca.crt" whose key "ca.crt" holds the CA bundle
// clients verify the API server with, created when the namespace appears,
// recreated when deleted and put back when changed (upstream
// pkg/controller/certificates/rootcacertpublisher/publisher.go).
package rootcacertpublisher
