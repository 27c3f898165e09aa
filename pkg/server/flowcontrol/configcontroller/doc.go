// Package configcontroller keeps the API Priority and Fairness engine's
// configuration in step with the FlowSchemas and
// PriorityLevelConfigurations of the API, as upstream's config controller
// and bootstrap ensurer (k8s.io/apiserver/pkg/util/flowcontrol and
// pkg/registry/flowcontrol/ensurer):
//
//   - at start it creates the mandatory and suggested objects that are
//     missing, updates those whose apf.kubernetes.io/autoupdate-spec
//     annotation is true (or absent on an object still at generation 1) and
//     whose spec differs, always restores the mandatory ones, and deletes
//     auto-updated objects upstream no longer suggests;
//   - it watches both kinds (informers on a loopback client) and applies
//     every change to the engine;
//   - it maintains each FlowSchema's Dangling condition.
package configcontroller
