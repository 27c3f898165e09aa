// Package pki creates and loads the certificates kapi serves with.
//
// [Ensure] keeps five key pairs in the certificate directory (--cert-dir):
//
//	ca.crt, ca.key               the cluster CA; signs the two below
//	apiserver.crt, apiserver.key the serving certificate (leaf, then CA)
//	admin.crt, admin.key         the admin client certificate
//	                             (CN kubernetes-admin, O system:masters)
//	front-proxy-ca.crt, .key     the front-proxy CA, separate from the
//	                             cluster CA; signs only the pair below
//	front-proxy-client.crt, .key the aggregator's proxy client certificate
//	                             (CN front-proxy-client, client auth)
//
// The first start generates them; later starts reuse what is there and
// regenerate only what is missing or no longer usable. [LoadServing],
// [LoadProxyClient] and [LoadCAPool] read certificates the operator brings
// (--tls-cert-file, --tls-private-key-file, --proxy-client-cert-file,
// --proxy-client-key-file, --client-ca-file,
// --requestheader-client-ca-file).
package pki
