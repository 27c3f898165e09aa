package noderestriction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"crypto/x509"
	"encoding/pem"
	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/auth/node"
	"github.com/kapi-dev/kapi/pkg/auth/nodeidentifier"
)

// PluginName is the plugin's name, as upstream registers it.
const PluginName = "NodeRestriction"

// Getter reads one object (a pod by namespace and name, a node by name),
// bypassing authorization; a missing one is a NotFound error.
type Getter interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
}

// Plugin is the NodeRestriction admission plugin.
type Plugin struct {
	pods, nodes Getter
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// New returns the plugin reading pods and nodes through the getters.
func New(pods, nodes Getter) *Plugin { return &Plugin{pods: pods, nodes: nodes} }

// Name implements admission.Plugin.
func (p *Plugin) Name() string { return PluginName }

// Handles creates, updates and deletes.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

// Admit restricts nodes, as upstream's Admit (NodeRestriction is a
// mutating plugin upstream, so it runs before webhooks).
func (p *Plugin) Admit(ctx context.Context, a admission.Attributes) error {
	nodeName, isNode := nodeidentifier.NodeIdentity(a.User)
	if !isNode {
		return nil
	}
	if nodeName == "" {
		return admission.NewForbidden(a, fmt.Errorf("could not determine node from user %q", a.User.Name))
	}
	switch gr := a.Resource.GroupResource(); gr.Group + "/" + gr.Resource {
	case "/pods":
		switch a.Subresource {
		case "":
			return p.admitPod(ctx, nodeName, a)
		case "status":
			return admitPodStatus(nodeName, a)
		case "eviction":
			return p.admitPodEviction(ctx, nodeName, a)
		}
		return admission.NewForbidden(a, fmt.Errorf("unexpected pod subresource %q, only 'status' and 'eviction' are allowed", a.Subresource))
	case "/nodes":
		return admitNode(nodeName, a)
	case "/persistentvolumeclaims":
		if a.Subresource == "status" {
			return admitPVCStatus(nodeName, a)
		}
		return admission.NewForbidden(a, errors.New("may only update PVC status"))
	case "/serviceaccounts":
		return p.admitServiceAccount(ctx, nodeName, a)
	case "coordination.k8s.io/leases":
		return admitLease(nodeName, a)
	case "storage.k8s.io/csinodes":
		return admitCSINode(nodeName, a)
	case "resource.k8s.io/resourceslices":
		if a.Operation == admission.Create {
			s, ok := a.Object.(*resourcev1.ResourceSlice)
			if !ok {
				return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
			}
			if s.Spec.NodeName == nil || *s.Spec.NodeName != nodeName {
				return admission.NewForbidden(a, errors.New("can only create ResourceSlice with the same NodeName as the requesting node"))
			}
		}
	case "certificates.k8s.io/certificatesigningrequests":
		return admitCSR(nodeName, a)
	}
	return nil
}

// Validate checks the deletion of a ResourceSlice, which needs the object
// being deleted: upstream checks it in Admit, where kube-apiserver passes
// it; kapi's mutating phase of a delete has no object, its validating
// phase (here) has it.
// ReadsObjects implements admission.ObjectReader: only a node's deletes
// of resource slices are checked.
func (p *Plugin) ReadsObjects(a admission.Attributes) bool {
	return a.Operation == admission.Delete && a.Resource.Group == "resource.k8s.io" && a.Resource.Resource == "resourceslices"
}

func (p *Plugin) Validate(_ context.Context, a admission.Attributes) error {
	nodeName, isNode := nodeidentifier.NodeIdentity(a.User)
	if !isNode || nodeName == "" || a.Operation != admission.Delete ||
		a.Resource.Group != "resource.k8s.io" || a.Resource.Resource != "resourceslices" {
		return nil
	}
	s, ok := a.OldObject.(*resourcev1.ResourceSlice)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
	}
	if s.Spec.NodeName == nil || *s.Spec.NodeName != nodeName {
		return admission.NewForbidden(a, errors.New("can only delete ResourceSlice with the same NodeName as the requesting node"))
	}
	return nil
}

// getPod reads a pod: NotFound is returned as is, other errors as
// Forbidden, as upstream.
func (p *Plugin) getPod(ctx context.Context, a admission.Attributes, name string) (*corev1.Pod, error) {
	obj, err := p.pods.Get(ctx, a.Namespace, name)
	if apierrors.IsNotFound(err) {
		return nil, err
	}
	if err != nil {
		return nil, admission.NewForbidden(a, err)
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, admission.NewForbidden(a, fmt.Errorf("unexpected type %T", obj))
	}
	return pod, nil
}

func (p *Plugin) admitPod(ctx context.Context, nodeName string, a admission.Attributes) error {
	switch a.Operation {
	case admission.Create:
		return p.admitPodCreate(ctx, nodeName, a)
	case admission.Delete:
		pod, err := p.getPod(ctx, a, a.Name)
		if err != nil {
			return err
		}
		if pod.Spec.NodeName != nodeName {
			return admission.NewForbidden(a, fmt.Errorf("node %q can only delete pods with spec.nodeName set to itself", nodeName))
		}
		return nil
	}
	return admission.NewForbidden(a, fmt.Errorf("unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, nodeName))
}

func (p *Plugin) admitPodCreate(ctx context.Context, nodeName string, a admission.Attributes) error {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		return admission.NewForbidden(a, fmt.Errorf("pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, nodeName))
	}
	if pod.Spec.NodeName != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with spec.nodeName set to itself", nodeName))
	}
	switch len(pod.OwnerReferences) {
	case 0:
		return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with an owner reference set to itself", nodeName))
	case 1:
	default:
		return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with a single owner reference set to itself", nodeName))
	}
	owner := pod.OwnerReferences[0]
	if owner.APIVersion != "v1" || owner.Kind != "Node" || owner.Name != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with an owner reference set to itself", nodeName))
	}
	if owner.Controller == nil || !*owner.Controller {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only create pods with a controller owner reference set to itself", nodeName))
	}
	if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
		return admission.NewForbidden(a, fmt.Errorf("node %q must not set blockOwnerDeletion on an owner reference", nodeName))
	}
	obj, err := p.nodes.Get(ctx, "", nodeName)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up node %s to verify uid: %v", nodeName, err))
	}
	n, ok := obj.(*corev1.Node)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", obj))
	}
	if owner.UID != n.UID {
		return admission.NewForbidden(a, fmt.Errorf("node %s UID mismatch: expected %s got %s", nodeName, owner.UID, n.UID))
	}
	if pod.Spec.ServiceAccountName != "" {
		return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference a service account", nodeName))
	}
	secrets, configMaps := node.PodSecretsAndConfigMaps(pod)
	if len(secrets) > 0 {
		return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference secrets", nodeName))
	}
	if len(configMaps) > 0 {
		return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference configmaps", nodeName))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool { return s.ClusterTrustBundle != nil }) {
			return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference clustertrustbundles", nodeName))
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			return admission.NewForbidden(a, fmt.Errorf("node %q can not create pods that reference persistentvolumeclaims", nodeName))
		}
	}
	return nil
}

func admitPodStatus(nodeName string, a admission.Attributes) error {
	if a.Operation != admission.Update {
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %q", a.Operation))
	}
	old, ok := a.OldObject.(*corev1.Pod)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
	}
	if old.Spec.NodeName != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("node %q can only update pod status for pods with spec.nodeName set to itself", nodeName))
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	if !labelsEqual(old.Labels, pod.Labels) {
		return admission.NewForbidden(a, fmt.Errorf("node %q cannot update labels through pod status", nodeName))
	}
	if !claimStatusesEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses) {
		// "statues": upstream's spelling.
		return admission.NewForbidden(a, fmt.Errorf("node %q cannot update resource claim statues", nodeName))
	}
	return nil
}

func labelsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func claimStatusesEqual(a, b []corev1.PodResourceClaimStatus) bool {
	return slices.EqualFunc(a, b, func(x, y corev1.PodResourceClaimStatus) bool {
		if x.Name != y.Name || (x.ResourceClaimName == nil) != (y.ResourceClaimName == nil) {
			return false
		}
		return x.ResourceClaimName == nil || *x.ResourceClaimName == *y.ResourceClaimName
	})
}

func (p *Plugin) admitPodEviction(ctx context.Context, nodeName string, a admission.Attributes) error {
	if a.Operation != admission.Create {
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %s", a.Operation))
	}
	eviction, ok := a.Object.(*policyv1.Eviction)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	name := a.Name
	if name == "" {
		if eviction.Name == "" {
			return admission.NewForbidden(a, errors.New("could not determine pod from request data"))
		}
		name = eviction.Name
	}
	pod, err := p.getPod(ctx, a, name)
	if err != nil {
		return err
	}
	if pod.Spec.NodeName != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("node %s can only evict pods with spec.nodeName set to itself", nodeName))
	}
	return nil
}

func admitPVCStatus(nodeName string, a admission.Attributes) error {
	if a.Operation != admission.Update {
		return admission.NewForbidden(a, fmt.Errorf("unexpected operation %q", a.Operation))
	}
	old, ok := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.OldObject))
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	// Compare all but what a kubelet may change: capacity, conditions and
	// (RecoverVolumeExpansionFailure, GA) the allocated resources; the
	// resourceVersion and managed fields are ignored as upstream does.
	old, pvc = old.DeepCopy(), pvc.DeepCopy()
	for _, c := range []*corev1.PersistentVolumeClaim{old, pvc} {
		c.ResourceVersion = ""
		c.ManagedFields = nil
		c.Status.Capacity = nil
		c.Status.Conditions = nil
		c.Status.AllocatedResourceStatuses = nil
		c.Status.AllocatedResources = nil
	}
	if !equality.Semantic.DeepEqual(old, pvc) {
		return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to update fields other than status.quantity and status.conditions: %v", nodeName, cmp.Diff(old, pvc)))
	}
	return nil
}

func admitNode(nodeName string, a admission.Attributes) error {
	if a.Name != nodeName {
		return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to modify node %q", nodeName, a.Name))
	}
	switch a.Operation {
	case admission.Create:
		n, ok := a.Object.(*corev1.Node)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		if n.Spec.ConfigSource != nil {
			// "create pods": upstream's wording.
			return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to create pods with a non-nil configSource", nodeName))
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, nil)); len(bad) > 0 {
			return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to set the following labels: %s", nodeName, strings.Join(bad, ", ")))
		}
	case admission.Update:
		n, ok := a.Object.(*corev1.Node)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		old, ok := a.OldObject.(*corev1.Node)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		if n.Spec.ConfigSource != nil && !equality.Semantic.DeepEqual(n.Spec.ConfigSource, old.Spec.ConfigSource) {
			return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to update configSource to a new non-nil configSource", nodeName))
		}
		if !equality.Semantic.DeepEqual(n.Spec.Taints, old.Spec.Taints) {
			return admission.NewForbidden(a, fmt.Errorf("node %q is not allowed to modify taints", nodeName))
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, old.Labels)); len(bad) > 0 {
			return admission.NewForbidden(a, fmt.Errorf("is not allowed to modify labels: %s", strings.Join(bad, ", ")))
		}
	}
	return nil
}

// modifiedLabels are the keys added, removed or changed between a and b.
func modifiedLabels(a, b map[string]string) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	return out
}

// kubeletLabels and kubeletLabelNamespaces are the labels a kubelet may
// set on its Node (k8s.io/kubelet/pkg/apis/well_known_labels.go).
var (
	kubeletLabels = []string{
		corev1.LabelHostname, corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
		corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
		corev1.LabelInstanceType, corev1.LabelInstanceTypeStable,
		corev1.LabelOSStable, corev1.LabelArchStable,
		"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
	}
	kubeletLabelNamespaces = []string{"kubelet.kubernetes.io", "node.kubernetes.io"}
)

func labelNamespace(k string) string {
	if ns, _, ok := strings.Cut(k, "/"); ok {
		return ns
	}
	return ""
}

func inDomain(ns, domain string) bool { return ns == domain || strings.HasSuffix(ns, "."+domain) }

func isKubeletLabel(k string) bool {
	if slices.Contains(kubeletLabels, k) {
		return true
	}
	ns := labelNamespace(k)
	return slices.ContainsFunc(kubeletLabelNamespaces, func(d string) bool { return inDomain(ns, d) })
}

// forbiddenLabels are the keys a node may not set, sorted: those in
// node-restriction.kubernetes.io, and kubernetes.io or k8s.io ones that
// are not kubelet labels.
func forbiddenLabels(keys []string) []string {
	var out []string
	for _, k := range keys {
		ns := labelNamespace(k)
		if inDomain(ns, corev1.LabelNamespaceNodeRestriction) ||
			((inDomain(ns, "kubernetes.io") || inDomain(ns, "k8s.io")) && !isKubeletLabel(k)) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (p *Plugin) admitServiceAccount(ctx context.Context, nodeName string, a admission.Attributes) error {
	if a.Operation != admission.Create || a.Subresource != "token" {
		return nil
	}
	tr, ok := a.Object.(*authenticationv1.TokenRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	ref := tr.Spec.BoundObjectRef
	if ref == nil || ref.APIVersion != "v1" || ref.Kind != "Pod" || ref.Name == "" {
		return admission.NewForbidden(a, errors.New("node requested token not bound to a pod"))
	}
	if ref.UID == "" {
		return admission.NewForbidden(a, errors.New("node requested token with a pod binding without a uid"))
	}
	pod, err := p.getPod(ctx, a, ref.Name)
	if err != nil {
		return err
	}
	if ref.UID != pod.UID {
		return admission.NewForbidden(a, fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	if pod.Spec.NodeName != nodeName {
		return admission.NewForbidden(a, errors.New("node requested token bound to a pod scheduled on a different node"))
	}
	return nil
}

func admitLease(nodeName string, a admission.Attributes) error {
	if a.Namespace != node.NamespaceNodeLease {
		return admission.NewForbidden(a, fmt.Errorf("can only access leases in the %q system namespace", node.NamespaceNodeLease))
	}
	name := a.Name
	if a.Operation == admission.Create {
		l, ok := a.Object.(*coordinationv1.Lease)
		if !ok {
			return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
		}
		name = l.Name
	}
	if name != nodeName {
		return admission.NewForbidden(a, errors.New("can only access node lease with the same name as the requesting node"))
	}
	return nil
}

func admitCSINode(nodeName string, a admission.Attributes) error {
	name := a.Name
	if a.Operation == admission.Create {
		m, err := meta.Accessor(a.Object)
		if err != nil {
			return admission.NewForbidden(a, errors.New("unable to access the object name"))
		}
		name = m.GetName()
	}
	if name != nodeName {
		return admission.NewForbidden(a, errors.New("can only access CSINode with the same name as the requesting node"))
	}
	return nil
}

// admitCSR: a node's CSR for the kubelet serving or kubelet client signer
// must name the node itself (AllowInsecureKubeletCertificateSigningRequests
// is off by default).
func admitCSR(nodeName string, a admission.Attributes) error {
	if a.Operation != admission.Create {
		return nil
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("unexpected type %T", a.Object))
	}
	if csr.Spec.SignerName != certificatesv1.KubeletServingSignerName && csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName {
		return nil
	}
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return admission.NewForbidden(a, errors.New("unable to parse csr: PEM block type must be CERTIFICATE REQUEST"))
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("unable to parse csr: %w", err))
	}
	if req.Subject.CommonName != nodeidentifier.UserPrefix+nodeName {
		return admission.NewForbidden(a, fmt.Errorf("can only create a node CSR with CN=system:node:%s", nodeName))
	}
	return nil
}
