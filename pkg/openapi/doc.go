// Package openapi turns the generated OpenAPI definitions of kapi's API types
// (package github.com/kapi-dev/kapi/pkg/generated/openapi) into what the REST
// layer needs:
//
//   - definition names as served documents spell them, the REST-friendly
//     model names such as "io.k8s.api.core.v1.ConfigMap", looked up by
//     group-version-kind or by Go type, with the
//     x-kubernetes-group-version-kind extension upstream attaches;
//   - the transitive closure of the definitions some kinds reference, as
//     OpenAPI v3 components.schemas or as Swagger 2.0 definitions, shaped as
//     kube-apiserver serves them (v3: a $ref with siblings is wrapped in
//     allOf; v2: defaults pruned, the x-kubernetes-v2-definition variant of
//     types such as IntOrString used);
//   - the operations of a group-version's resources ([BuildPaths]): every
//     operation upstream publishes for each path (list, watch and the
//     deprecated watch paths, create, read, replace, patch, delete,
//     deletecollection, subresources), with upstream's operation IDs,
//     parameters, request bodies, responses, media types, tags and the
//     x-kubernetes-action and x-kubernetes-group-version-kind extensions,
//     under k8s.io/apiserver's installer rules (built-in resources) or
//     apiextensions-apiserver's builder rules (custom resources), rendered
//     as OpenAPI v2 or v3. This is the one place kapi builds OpenAPI paths;
//   - an OpenAPI v3 document for one group-version, and its publication
//     ([PublishGroupVersions]) to be built when first requested, with
//     kube-apiserver's info and bearer-token security scheme; in v2 the
//     parameters shared as kube-openapi shares them
//     ([Paths.V2WithSharedParameters]);
//   - the documents of the discovery roots, /version/ and service-account
//     issuer discovery ([Root], [PublishRoots]);
//   - structured-merge-diff type information (a [typed.Parser] and a
//     [managedfields.TypeConverter]) for server-side apply.
//
// A [Definitions] is immutable once built and safe for concurrent use. The
// schemas it returns are shared: callers must not modify them.
package openapi

// zz_generated.smd.go holds the structured-merge-diff types of the generated
// definitions; hack/update-openapi.sh regenerates it after the definitions.
//go:generate go test -run ^TestGeneratedSMDTypesAreCurrent$ -update-smd .
