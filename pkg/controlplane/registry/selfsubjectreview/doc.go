// Package selfsubjectreview serves authentication.k8s.io/v1
// selfsubjectreviews: a create that answers with the requesting user as
// authentication saw it (kubectl auth whoami). Nothing is stored.
package selfsubjectreview
