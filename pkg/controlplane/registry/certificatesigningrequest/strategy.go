package certificatesigningrequest

import (
	"context"
	"slices"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation/certificates"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{certificatesv1.SchemeGroupVersion}

// strategy is the main resource's behaviour (upstream's csrStrategy).
type strategy struct{}

// Strategy is the create and update strategy of CSRs.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate replaces the requester fields by the identity of the
// user making the request and clears the status: nobody creates an
// approved or issued request.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	csr := obj.(*certificatesv1.CertificateSigningRequest)
	csr.Spec.Username, csr.Spec.UID, csr.Spec.Groups, csr.Spec.Extra = "", "", nil, nil
	if u, ok := request.UserFrom(ctx); ok && u != nil {
		csr.Spec.Username = u.Name
		csr.Spec.UID = u.UID
		csr.Spec.Groups = slices.Clone(u.Groups)
		if len(u.Extra) > 0 {
			csr.Spec.Extra = make(map[string]certificatesv1.ExtraValue, len(u.Extra))
			for k, v := range u.Extra {
				csr.Spec.Extra[k] = slices.Clone(v)
			}
		}
	}
	csr.Status = certificatesv1.CertificateSigningRequestStatus{}
}

// PrepareForUpdate keeps the stored spec and status: the main resource
// changes metadata only.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = *o.Spec.DeepCopy()
	csr.Status = *o.Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return certificates.ValidateCreate(obj.(*certificatesv1.CertificateSigningRequest))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return certificates.ValidateUpdate(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: server-side apply to the main resource does not own
// status.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is /status (upstream's csrStatusStrategy): the spec and
// the Approved and Denied conditions are kept; the certificate and the
// other conditions change.
type statusStrategy struct{ strategy }

// StatusStrategy is the update strategy of certificatesigningrequests/status.
var StatusStrategy = statusStrategy{}

func (statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = *o.Spec.DeepCopy()
	keepConditions(csr, o, certificatesv1.CertificateApproved)
	keepConditions(csr, o, certificatesv1.CertificateDenied)
	stampConditions(csr, o, metav1.Now())
}

func (statusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return certificates.ValidateStatusUpdate(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest))
}

// GetResetFields: server-side apply through /status does not own spec.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"})
}

// approvalStrategy is /approval (upstream's csrApprovalStrategy): only the
// conditions change.
type approvalStrategy struct{ strategy }

// ApprovalStrategy is the update strategy of
// certificatesigningrequests/approval.
var ApprovalStrategy = approvalStrategy{}

func (approvalStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	csr, o := obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest)
	csr.Spec = *o.Spec.DeepCopy()
	csr.Status.Certificate = slices.Clone(o.Status.Certificate)
	stampConditions(csr, o, metav1.Now())
}

func (approvalStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return certificates.ValidateApprovalUpdate(obj.(*certificatesv1.CertificateSigningRequest), old.(*certificatesv1.CertificateSigningRequest))
}

// GetResetFields: server-side apply through /approval owns neither spec
// nor the certificate.
func (approvalStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"}, []string{"status", "certificate"})
}

// keepConditions puts back the stored conditions of type t when the update
// has as many of them (upstream's preserveConditionInstances); a
// different count is left for validation to refuse.
func keepConditions(csr, old *certificatesv1.CertificateSigningRequest, t certificatesv1.RequestConditionType) {
	var oldIdx, newIdx []int
	for i, c := range old.Status.Conditions {
		if c.Type == t {
			oldIdx = append(oldIdx, i)
		}
	}
	for i, c := range csr.Status.Conditions {
		if c.Type == t {
			newIdx = append(newIdx, i)
		}
	}
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i := range oldIdx {
		csr.Status.Conditions[newIdx[i]] = *old.Status.Conditions[oldIdx[i]].DeepCopy()
	}
}

// stampConditions fills unset condition times (upstream's
// populateConditionTimestamps): lastUpdateTime now; lastTransitionTime the
// stored one of a condition with the same type and status, else now.
func stampConditions(csr, old *certificatesv1.CertificateSigningRequest, now metav1.Time) {
	for i := range csr.Status.Conditions {
		c := &csr.Status.Conditions[i]
		if c.LastUpdateTime.IsZero() {
			c.LastUpdateTime = now
		}
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, oc := range old.Status.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = oc.LastTransitionTime
				break
			}
		}
	}
}
