// Package tokenreview serves authentication.k8s.io/v1 tokenreviews: a
// create that authenticates spec.token as a bearer token and answers who
// it belongs to (how aggregated API servers and webhooks delegate
// authentication). Nothing is stored.
package tokenreview
