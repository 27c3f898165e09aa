// Package flowschema is the storage of flowcontrol.apiserver.k8s.io/v1
// FlowSchemas and their status subresource, with upstream's strategy
// (pkg/registry/flowcontrol/flowschema): cluster-scoped, status reset on
// create and kept on update, generation bumped on spec changes.
package flowschema
