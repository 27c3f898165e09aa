// Package certificates validates certificates.k8s.io/v1
// CertificateSigningRequests as upstream's
// pkg/apis/certificates/validation (kubernetes v1.37): the request parses
// as a signed PKCS#10 CSR, usages are known and unique, the signer name is
// well-formed, conditions follow the approval rules, status.certificate
// holds only CERTIFICATE PEM blocks, and each update path (main resource,
// /status, /approval) may change only what it owns.
package certificates
