// Package certificates holds kube-controller-manager's
// CertificateSigningRequest controllers (kubernetes
// pkg/controller/certificates, v1.37), run in-process by the controller
// manager:
//
//   - the signer (csrsigning) signs approved requests of the
//     kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet,
//     kubelet-serving and legacy-unknown signers with the cluster CA,
//     after each signer's restrictions; a request a signer refuses gets
//     the Failed condition (reason SignerValidationFailure);
//   - the approver (csrapproving) approves kubelet client requests whose
//     requester may create certificatesigningrequests/nodeclient (or
//     /selfnodeclient for its own node name), asked of the server's
//     authorizer with a SubjectAccessReview;
//   - the cleaner (csrcleaner) deletes requests that are done with:
//     issued or approved an hour ago, denied or failed an hour ago,
//     pending for a day, or whose certificate expired.
package certificates
