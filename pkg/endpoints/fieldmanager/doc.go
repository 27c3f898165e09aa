// Package fieldmanager builds the field managers of built-in resources:
// the bookkeeping of server-side apply (metadata.managedFields) on every
// write, and the merge of applied configurations with their conflicts.
//
// One [Manager] serves one (kind, subresource) pair. All of them share one
// structured-merge-diff TypeConverter built from kapi's generated OpenAPI
// definitions: building it costs tens of milliseconds and megabytes, so it
// is built once per process, on first use ([TypeConverter]), and never
// changes afterwards.
//
// kapi serves its built-in types in their external versions only (there
// are no internal versions): the hub version of a Manager is the version
// it serves, and the scheme is the converter, defaulter and creater.
//
// Custom resources bring their own TypeConverter (built from the CRD's
// schemas), convertor, defaulter and creater for unstructured objects
// ([Config].Convertor, Defaulter, Creater) and set [Config].CustomResource
// for upstream's CRD field manager.
package fieldmanager
