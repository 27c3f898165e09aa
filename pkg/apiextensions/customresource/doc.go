// Package customresource holds what serves one version of a
// CustomResourceDefinition: its strategy, subresources, encoding and
// server-side apply types. The apiextensions server (package
// apiextensions) builds one store per served version from them.
//
// Custom resources are unstructured objects served in JSON and YAML
// ([Serializer]; protobuf carries only their metadata views and errors, as
// upstream),
// stored as JSON in the storage version and read as the served version
// ([StorageCodec], converting with the CRD's converter, and applying the
// read schema's defaults to what storage returns).
//
// Writes are pruned before the field manager sees them
// ([PruneUnknownFields], which the stores offer to the handlers: the
// fields dropped are Warning headers under fieldValidation=Warn, the
// default, a 400 under Strict, silent under Ignore). The [Strategy]
// prunes (what did not come through the handlers) and defaults writes,
// checks apiVersion and kind, then the version's schema and its CEL
// rules (packages schema and cel), with ratcheting on update.
// Status is reset on create and kept on update when the status
// subresource is enabled ([StatusStore]); any change outside metadata
// bumps the generation.
//
// Versions with spec.subresources.scale serve <plural>/scale as
// autoscaling/v1 Scale over the CRD's replica paths ([ScaleREST]: a
// missing spec replicas field is a 500 on get, a 400 on an update that
// leaves it unset; managed fields of the replicas path move between the
// object and its Scale). A version's selectableFields are field selector
// labels of list and watch ([SelectableFields], [AttrsFunc]; other labels
// are "field label not supported: ..." through the [Convertor]). Table
// output shows the additionalPrinterColumns ([NewTableConvertor]).
//
// Every write records metadata.managedFields and server-side apply is
// served ([FieldManagers]): the field manager's structured-merge-diff
// types come from each version's schema ([NewTypeConverter]: apiVersion,
// kind and ObjectMeta at the root and in embedded resources;
// x-kubernetes-list-type, -list-map-keys, -map-type,
// -preserve-unknown-fields and -int-or-string honoured); status is reset
// on the main resource, spec on /status.
package customresource
