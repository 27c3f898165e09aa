// Package podcertificaterequest is the storage of certificates.k8s.io/v1
// PodCertificateRequests (namespaced, with /status), with upstream's
// strategy (kubernetes pkg/registry/certificates/podcertificaterequest,
// v1.37): the spec is immutable, status changes only through /status,
// where the Issued, Denied and Failed conditions are kept once set and a
// change of status.certificateChain needs the "sign" verb on the signer
// (asked of the server's authorizer); spec.signerName, spec.podName and
// spec.nodeName are field selectors.
//
// Not done here, as it needs pieces kapi does not have: upstream's Node
// authorizer and NodeRestriction admission plugin limit a kubelet to
// creating requests for pods bound to its own node, with the pod's,
// service account's and node's real UIDs (checked against the stored
// Pod, ServiceAccount and Node); kapi accepts any identities that pass
// validation from any user RBAC allows to create podcertificaterequests.
// Upstream's PodCertificateMaxExpiration admission (capping
// maxExpirationSeconds for kubernetes.io signers) is not run either.
package podcertificaterequest
