// Package policy converts Evictions between policy/v1beta1 and policy/v1.
// kube-apiserver still decodes a policy/v1beta1 Eviction posted to
// pods/<name>/eviction (its scheme registers both versions of the type
// and converts through the internal one), although policy/v1beta1 is no
// longer served as a group-version; older clients (kubectl drain before
// 1.22 and libraries written for it) send it. The two versions have the
// same fields.
package policy
