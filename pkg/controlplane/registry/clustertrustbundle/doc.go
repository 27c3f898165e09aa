// Package clustertrustbundle is the storage of certificates.k8s.io/v1
// ClusterTrustBundles (cluster-scoped, no status), with upstream's strategy
// (kubernetes pkg/registry/certificates/clustertrustbundle, v1.37): the
// name is tied to spec.signerName, the signer name is immutable, the trust
// bundle holds distinct CA certificates, spec.signerName is a field
// selector.
//
// Writing a bundle that names a signer needs the "attest" verb on
// signers/<signerName>: the ClusterTrustBundleAttest admission plugin
// (pkg/admission/certificates). Upstream's kubelet projects bundles into
// pods (clusterTrustBundle volume projection): kapi has no kubelet.
package clustertrustbundle
