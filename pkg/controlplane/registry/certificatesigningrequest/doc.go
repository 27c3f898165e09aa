// Package certificatesigningrequest is the storage of certificates.k8s.io/v1
// CertificateSigningRequests and their status and approval subresources,
// with upstream's strategies (kubernetes pkg/registry/certificates/
// certificates, v1.37): the requester's identity is taken from the request
// on create and never from the body; the main resource changes only
// metadata; /status changes the certificate and conditions other than
// Approved and Denied; /approval changes the conditions only.
//
// certificates.k8s.io/v1 has no defaulting upstream (its defaults.go
// registers no SetDefaults function; usages and signerName were defaulted
// by v1beta1 only), so none is registered.
package certificatesigningrequest
