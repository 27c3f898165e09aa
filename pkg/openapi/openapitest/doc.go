// Package openapitest holds what tests compare kapi's OpenAPI documents
// with: upstream's operations for a few resources (testdata/*.txt, each
// stating its source) and the code that reduces a served OpenAPI v2 or v3
// document to the same one-line-per-operation form.
//
// Each operation is one line:
//
//	METHOD PATH OPERATION-ID ACTION APIVERSION/KIND PARAMETERS
//
// where ACTION is the x-kubernetes-action extension, APIVERSION/KIND the
// x-kubernetes-group-version-kind one ("v1/ConfigMap",
// "coordination.k8s.io/v1/Lease"; "-" for none) and PARAMETERS the names
// of the path's and the operation's parameters, body excluded, sorted and
// joined by commas ("-" for none). A set's "# paths:" line is the regular
// expression of the paths it covers.
package openapitest
