// Package mutating is the MutatingAdmissionPolicy admission plugin:
// MutatingAdmissionPolicies and their bindings
// (admissionregistration.k8s.io/v1) mutate objects in the mutating phase
// of admission, as kube-apiserver v1.37 does (k8s.io/apiserver
// pkg/admission/plugin/policy/mutating):
//
//   - matching (matchConstraints, the binding's matchResources,
//     namespace and object selectors), params (paramKind, paramRef) and
//     the CEL variables are the validating policies' (package matching);
//     matchConditions and variables are evaluated before each mutation;
//   - a mutation of patchType ApplyConfiguration is a CEL expression
//     building an Object{...} (nested Object.<field>{...} values), merged
//     into the object with server-side apply's rules
//     (structured-merge-diff and the kind's schema; setting an atomic
//     list, map or struct is refused); one of patchType JSONPatch builds
//     a list of JSONPatch{op, path, from, value}, applied in order
//     (jsonpatch.escapeKey escapes a path token);
//   - the mutations of a binding run in order, each seeing the object as
//     the ones before left it; bindings run in the order of policy names,
//     then binding names; the mutated object is then decoded, defaulted
//     and passed on, so validating policies and webhooks see it;
//   - reinvocationPolicy IfNeeded: a binding is invoked once more when an
//     invocation after it changed the object. Upstream reinvokes across
//     the whole mutating chain (webhooks included); kapi's chain has no
//     reinvocation, so only this plugin's own invocations count;
//   - errors (a policy or binding that does not compile or resolve its
//     params, an expression that fails, a patch that does not apply) are
//     collected and, for policies with failurePolicy Fail, refuse the
//     request with upstream's message ("policy '<p>' with binding '<b>'
//     denied request: ...", 403) once every invocation has run.
//
// Differences from upstream: Object types are not typed from the kind's
// OpenAPI schema (every field is dyn, see [Env]); custom resources are
// merged with the deduced schema (maps granular, lists atomic) rather
// than their CRD's. The authorizer variables are upstream's (package
// celauthz).
package mutating
