// Package serviceaccount issues and verifies service-account tokens: JWTs
// (JWS compact serialization) signed with the --service-account-signing-key-file
// key and verified with the --service-account-key-file keys, carrying
// upstream's private "kubernetes.io" claims. It also serves service-account
// issuer discovery (/.well-known/openid-configuration, /openid/v1/jwks).
//
// The JOSE handling is written here on the standard library: RS256/384/512,
// PS256/384/512 and ES256/384/512 are verified; "none" and HMAC algorithms
// are refused.
package serviceaccount
