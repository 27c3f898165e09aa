// Package oidc authenticates JWTs of OpenID Connect issuers, configured by
// kube-apiserver's --oidc-* flags or the jwt authenticators of a structured
// --authentication-config file (apiserver.config.k8s.io/v1
// AuthenticationConfiguration): issuer discovery and JWKS over TLS,
// audiences, claim validation rules and claim mappings (by claim and
// prefix, or CEL expressions) and user validation rules in CEL.
package oidc
