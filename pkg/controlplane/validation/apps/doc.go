// Package apps checks apps/v1 objects (Deployment, ReplicaSet,
// StatefulSet, DaemonSet, ControllerRevision) as kube-apiserver's
// kubernetes/kubernetes pkg/apis/apps/validation (v1.37) does, with the
// same field paths, error types and messages. It works on the versioned
// types of k8s.io/api: kapi has no internal API versions. Pod templates are
// checked by pkg/controlplane/validation/core, as upstream's apps
// validation calls core's.
//
// As in pkg/controlplane/validation, the functions come in two sets:
// Validate<Kind> / Validate<Kind>Update check the whole object, metadata
// included; Validate<Kind>Fields / Validate<Kind>UpdateFields check all
// but the generic metadata rules, which the generic store applies itself
// before it asks the strategy. Status updates have
// Validate<Kind>StatusUpdateFields.
//
// Where upstream's update validation checks a spec twice (the ReplicaSet
// and DaemonSet strategies call both Validate<Kind> and
// Validate<Kind>Update, which both validate the spec, so each spec error is
// reported twice), kapi reports each error once.
//
// No function mutates its arguments.
package apps
