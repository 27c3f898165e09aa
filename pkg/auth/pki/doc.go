// Package pki creates and loads the certificates kapi serves with.
//
// [Ensure] keeps three key pairs in the certificate directory (--cert-dir):
//
//	ca.crt, ca.key               the cluster CA; signs the two below
//	apiserver.crt, apiserver.key the serving certificate (leaf, then CA)
//	admin.crt, admin.key         the admin client certificate
//	                             (CN kubernetes-admin, O system:masters)
//
// The first start generates them; later starts reuse what is there and
// regenerate only what is missing or no longer usable. [LoadServing] and
// [LoadCAPool] read certificates the operator brings (--tls-cert-file,
// --tls-private-key-file, --client-ca-file).
package pki
