// Package quota computes what objects charge against ResourceQuotas, as
// kube-apiserver's and kube-controller-manager's quota evaluators do
// (kubernetes pkg/quota/v1/evaluator/core and
// staging/src/k8s.io/apiserver/pkg/quota/v1, v1.37): object counts
// (count/<resource>[.<group>] and the legacy names pods, services,
// configmaps, secrets, persistentvolumeclaims, replicationcontrollers,
// resourcequotas), the compute resources of pods that are not terminal,
// services' load balancers and node ports, claims' storage requests, and
// the quota scopes (Terminating, NotTerminating, BestEffort,
// NotBestEffort, PriorityClass, CrossNamespacePodAffinity).
//
// The admission plugin (pkg/admission/resourcequota) charges a write's
// usage to the quotas of its namespace; the resourcequota controller
// (pkg/controlplane/controllers/resourcequota) recomputes every quota's
// usage from the objects stored.
package quota
