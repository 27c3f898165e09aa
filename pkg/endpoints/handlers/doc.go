// Package handlers holds the REST handlers kapi serves resources with: one
// file per verb (get, list, watch, create, update, patch, delete,
// deletecollection), content negotiation (JSON, YAML, protobuf, Table,
// PartialObjectMetadata, watch streams, gzip, pretty) and the negotiated
// metav1.Status error writer.
//
// Every handler reads the namespace, name and subresource from the
// request.RequestInfo the filter chain put on the context, puts the
// namespace on the context with request.WithNamespace, and talks to the
// resource through the small interfaces of pkg/registry/rest.
//
// Behaviour (status codes, messages, defaults) follows kube-apiserver's
// handlers; see the comments on each handler.
package handlers
