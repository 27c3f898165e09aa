// Package celauthz is the CEL authorizer library of admission
// expressions (ValidatingAdmissionPolicy expressions and webhook
// matchConditions), as upstream's k8s.io/apiserver/pkg/cel/library
// authz.go defines it: the variables authorizer and
// authorizer.requestResource, checks built with
// authorizer.group(g).resource(r).subresource(s).namespace(ns).name(n)
// or authorizer.path(p), run with .check(verb) against the server's
// real authorizer for the request's user (or, through
// authorizer.serviceAccount(ns, name), for a service account), and the
// decision read with allowed(), reason(), errored() and error().
package celauthz
