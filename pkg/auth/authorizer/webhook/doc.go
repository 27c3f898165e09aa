// Package webhook is kube-apiserver's Webhook authorizer
// (--authorization-mode=Webhook): each decision is asked of a remote
// service with a SubjectAccessReview (authorization.k8s.io/v1, or v1beta1)
// POSTed over HTTPS to the server of a kubeconfig file
// (--authorization-webhook-config-file), and answers are cached: allowed
// ones for --authorization-webhook-cache-authorized-ttl (5m), the others
// for --authorization-webhook-cache-unauthorized-ttl (30s), as upstream's
// k8s.io/apiserver/plugin/pkg/authorizer/webhook.
package webhook
