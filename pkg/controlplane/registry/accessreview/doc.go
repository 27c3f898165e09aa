// Package accessreview serves the authorization.k8s.io/v1 reviews:
// subjectaccessreviews, selfsubjectaccessreviews, localsubjectaccessreviews
// (can a user do this?) and selfsubjectrulesreviews (what may I do?). Each
// is a create that answers with the authorizer's decision in status;
// nothing is stored. Validation and answers follow kube-apiserver's.
package accessreview
