package certificates

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	certvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/certificates"
)

// The plugins' names, as upstream registers them.
const (
	ApprovalPluginName           = "CertificateApproval"
	SigningPluginName            = "CertificateSigning"
	SubjectRestrictionPluginName = "CertificateSubjectRestriction"
	AttestPluginName             = "ClusterTrustBundleAttest"
)

var (
	csrs    = schema.GroupResource{Group: certificatesv1.GroupName, Resource: "certificatesigningrequests"}
	bundles = schema.GroupResource{Group: certificatesv1.GroupName, Resource: "clustertrustbundles"}
)

// Approval is the CertificateApproval plugin (upstream's
// plugin/pkg/admission/certificates/approval).
type Approval struct{ authz authorizer.Authorizer }

// NewApproval returns CertificateApproval asking authz.
func NewApproval(authz authorizer.Authorizer) *Approval { return &Approval{authz: authz} }

var _ admission.Validator = (*Approval)(nil)

// Name implements admission.Plugin.
func (p *Approval) Name() string { return ApprovalPluginName }

// Handles updates only.
func (p *Approval) Handles(op admission.Operation) bool { return op == admission.Update }

// Validate checks "approve" on the signer of the stored request (the old
// object: changing the signer through /approval is refused by validation
// anyway).
// ReadsObjects implements admission.ObjectReader.
func (p *Approval) ReadsObjects(a admission.Attributes) bool {
	return a.Subresource == "approval" && a.Resource.GroupResource() == csrs
}

func (p *Approval) Validate(ctx context.Context, a admission.Attributes) error {
	if a.Subresource != "approval" || a.Resource.GroupResource() != csrs {
		return nil
	}
	csr, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	if !IsAuthorizedForSignerName(ctx, p.authz, a.User, "approve", csr.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to approve requests with signerName %q", csr.Spec.SignerName))
	}
	return nil
}

// Signing is the CertificateSigning plugin (upstream's
// plugin/pkg/admission/certificates/signing).
type Signing struct{ authz authorizer.Authorizer }

// NewSigning returns CertificateSigning asking authz.
func NewSigning(authz authorizer.Authorizer) *Signing { return &Signing{authz: authz} }

var _ admission.Validator = (*Signing)(nil)

// Name implements admission.Plugin.
func (p *Signing) Name() string { return SigningPluginName }

// Handles updates only.
func (p *Signing) Handles(op admission.Operation) bool { return op == admission.Update }

// Validate checks "sign" on the stored request's signer when a /status
// update changes status.certificate or status.conditions.
// ReadsObjects implements admission.ObjectReader.
func (p *Signing) ReadsObjects(a admission.Attributes) bool {
	return a.Subresource == "status" && a.Resource.GroupResource() == csrs
}

func (p *Signing) Validate(ctx context.Context, a admission.Attributes) error {
	if a.Subresource != "status" || a.Resource.GroupResource() != csrs {
		return nil
	}
	old, ok := a.OldObject.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.OldObject))
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.Object))
	}
	if reflect.DeepEqual(old.Status.Certificate, csr.Status.Certificate) && equality.Semantic.DeepEqual(old.Status.Conditions, csr.Status.Conditions) {
		return nil
	}
	if !IsAuthorizedForSignerName(ctx, p.authz, a.User, "sign", old.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to sign requests with signerName %q", old.Spec.SignerName))
	}
	return nil
}

// SubjectRestriction is the CertificateSubjectRestriction plugin
// (upstream's plugin/pkg/admission/certificates/subjectrestriction).
type SubjectRestriction struct{}

// NewSubjectRestriction returns CertificateSubjectRestriction.
func NewSubjectRestriction() *SubjectRestriction { return &SubjectRestriction{} }

var _ admission.Validator = (*SubjectRestriction)(nil)

// Name implements admission.Plugin.
func (p *SubjectRestriction) Name() string { return SubjectRestrictionPluginName }

// Handles creates only.
func (p *SubjectRestriction) Handles(op admission.Operation) bool { return op == admission.Create }

// Validate refuses a kube-apiserver-client request whose subject
// organizations include system:masters.
// ReadsObjects implements admission.ObjectReader.
func (p *SubjectRestriction) ReadsObjects(a admission.Attributes) bool {
	return a.Resource.GroupResource() == csrs && a.Subresource == ""
}

func (p *SubjectRestriction) Validate(_ context.Context, a admission.Attributes) error {
	if a.Resource.GroupResource() != csrs || a.Subresource != "" {
		return nil
	}
	csr, ok := a.Object.(*certificatesv1.CertificateSigningRequest)
	if !ok {
		return admission.NewForbidden(a, fmt.Errorf("expected type CertificateSigningRequest, got: %T", a.Object))
	}
	if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName {
		return nil
	}
	req, err := certvalidation.ParseCSR(csr.Spec.Request)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("failed to parse CSR: %v", err))
	}
	if slices.Contains(req.Subject.Organization, "system:masters") {
		return admission.NewForbidden(a, fmt.Errorf("use of %s signer with system:masters group is not allowed", certificatesv1.KubeAPIServerClientSignerName))
	}
	return nil
}

// Attest is the ClusterTrustBundleAttest plugin (upstream's
// plugin/pkg/admission/certificates/ctbattest; the ClusterTrustBundle
// feature is on in kapi, which serves certificates.k8s.io/v1
// clustertrustbundles).
type Attest struct{ authz authorizer.Authorizer }

// NewAttest returns ClusterTrustBundleAttest asking authz.
func NewAttest(authz authorizer.Authorizer) *Attest { return &Attest{authz: authz} }

var _ admission.Validator = (*Attest)(nil)

// Name implements admission.Plugin.
func (p *Attest) Name() string { return AttestPluginName }

// Handles creates and updates.
func (p *Attest) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate checks "attest" on the new bundle's signer, if it names one
// (validation refuses changing it), except for updates that only change
// ownerReferences or finalizers (garbage collection, storage migration).
// ReadsObjects implements admission.ObjectReader.
func (p *Attest) ReadsObjects(a admission.Attributes) bool {
	return a.Resource.GroupResource() == bundles
}

func (p *Attest) Validate(ctx context.Context, a admission.Attributes) error {
	if a.Resource.GroupResource() != bundles {
		return nil
	}
	bundle, ok := a.Object.(*certificatesv1.ClusterTrustBundle)
	if !ok {
		// Upstream names the old object's type here.
		return admission.NewForbidden(a, fmt.Errorf("expected type ClusterTrustBundle, got: %T", a.OldObject))
	}
	if bundle.Spec.SignerName == "" {
		return nil
	}
	if a.Operation == admission.Update && onlyGCFieldsChanged(a.Object, a.OldObject) {
		return nil
	}
	if !IsAuthorizedForSignerName(ctx, p.authz, a.User, "attest", bundle.Spec.SignerName) {
		return admission.NewForbidden(a, fmt.Errorf("user not permitted to attest for signerName %q", bundle.Spec.SignerName))
	}
	return nil
}

// onlyGCFieldsChanged: obj differs from old in ownerReferences,
// finalizers, resourceVersion or managedFields only (upstream's
// rbac.IsOnlyMutatingGCFields).
func onlyGCFieldsChanged(obj, old runtime.Object) bool {
	if old == nil || reflect.ValueOf(old).IsNil() {
		return false
	}
	o := obj.DeepCopyObject()
	om, ok1 := o.(metav1.Object)
	oldm, ok2 := old.(metav1.Object)
	if !ok1 || !ok2 {
		return false
	}
	om.SetOwnerReferences(oldm.GetOwnerReferences())
	om.SetFinalizers(oldm.GetFinalizers())
	om.SetResourceVersion(oldm.GetResourceVersion())
	om.SetManagedFields(oldm.GetManagedFields())
	return equality.Semantic.DeepEqual(o, old)
}
