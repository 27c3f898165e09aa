// Package certificates holds kube-apiserver's certificate admission
// plugins (kubernetes plugin/pkg/admission/certificates, v1.37), all
// default-on upstream:
//
//   - CertificateApproval: approving or denying a CertificateSigningRequest
//     (certificatesigningrequests/approval) needs the verb "approve" on
//     the synthetic resource certificates.k8s.io "signers" named after the
//     request's signer (or "<domain>/*");
//   - CertificateSigning: changing a request's status.certificate or
//     status.conditions (certificatesigningrequests/status) needs "sign";
//   - CertificateSubjectRestriction: a kubernetes.io/kube-apiserver-client
//     request may not ask for the system:masters group;
//   - ClusterTrustBundleAttest: writing a ClusterTrustBundle with a
//     spec.signerName needs "attest".
//
// Each asks the server's authorizer, as upstream's
// IsAuthorizedForSignerName.
package certificates
