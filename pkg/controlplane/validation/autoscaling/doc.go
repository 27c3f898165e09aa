// Package autoscaling checks HorizontalPodAutoscalers as kube-apiserver's
// pkg/apis/autoscaling/validation does (v1.37), on autoscaling/v2 objects
// (the stored version; autoscaling/v1 objects are converted to it first,
// as upstream validates its internal version), with the same field paths,
// error types and messages.
//
// The Validate<Kind>Fields functions leave out the generic metadata rules,
// which the generic store checks itself.
package autoscaling
