// Package cel compiles and evaluates the CEL rules of Kubernetes schemas
// (x-kubernetes-validations), with the Kubernetes CEL libraries and
// upstream's cost model. It depends on no serving code, so that other
// kinds of rules (admission policies) can reuse its environment
// ([EnvOptions]) and libraries.
//
// [NewValidator] compiles the rules of a schema once (cel.dev/cel-go),
// with self and oldSelf typed from the schema as upstream: objects are
// struct types with their escaped property names, formats date,
// date-time, duration and byte are timestamps, durations and bytes,
// int-or-string is dyn, list-type set and map lists compare regardless
// of order. The libraries are upstream's lists, regex, url, quantity,
// ip and cidr, format and semver (version 1); the image library is not
// provided. Compilation reports, as the CRD validation does, rules that
// do not type-check, whose estimated cost (times how often they may run)
// is above upstream's static limits, and oldSelf used below a list whose
// items cannot be correlated.
//
// [Validator.Validate] evaluates the rules of an object: transition rules
// (using oldSelf) only on update where an old value correlates, or with
// optionalOldSelf; per-call and per-object cost limits as upstream; on
// update, failures of values unchanged from the old object are dropped
// (validation ratcheting, KEP-4008), but for rules using oldSelf.
package cel
