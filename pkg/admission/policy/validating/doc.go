// Package validating is the ValidatingAdmissionPolicy admission plugin:
// ValidatingAdmissionPolicies and their bindings
// (admissionregistration.k8s.io/v1) are evaluated right before an object
// is stored, as kube-apiserver v1.37 evaluates them (k8s.io/apiserver
// pkg/admission/plugin/policy/validating):
//
//   - a binding applies its policy to the requests both the policy's
//     matchConstraints and the binding's matchResources match (rules with
//     subresources and wildcards, excluded rules, namespaceSelector,
//     objectSelector), and the policy's matchConditions accept;
//   - params: the policy's paramKind, the binding's paramRef (a name or a
//     selector, in paramRef.namespace or the request's namespace for
//     namespaced kinds), parameterNotFoundAction Allow or Deny; each
//     param object found is evaluated in turn;
//   - CEL: object, oldObject, request, params, namespaceObject and
//     variables (evaluated in order, each seeing the ones before it), with
//     the Kubernetes libraries of pkg/apiextensions/cel; the authorizer
//     variable is not provided (see [Compile]);
//   - a failed validation is reported by the binding's validationActions:
//     Deny (upstream's error, the validation's reason and code, the
//     message, messageExpression or "failed expression: <expression>"),
//     Warn (a warning header) and Audit (the
//     validation.policy.admission.k8s.io/validation_failure audit
//     annotation); auditAnnotations are recorded as <policy>/<key>;
//   - errors (evaluation errors, params not found with Deny) follow the
//     policy's failurePolicy.
//
// Policies' type checking runs when a policy is created or changed: each
// expression is compiled against the matched built-in kinds' types and
// the problems are written to status.typeChecking.expressionWarnings
// with status.observedGeneration ([TypeCheck]). Policies and bindings are
// read by package configsource; params by a [Params] (package params).
package validating
