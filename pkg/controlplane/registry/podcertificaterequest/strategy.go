package podcertificaterequest

import (
	"context"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	admissioncertificates "github.com/kapi-dev/kapi/pkg/admission/certificates"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/certificates"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var groupVersions = []schema.GroupVersion{certificatesv1.SchemeGroupVersion}

// strategy is the main resource's behaviour (upstream's Strategy).
type strategy struct{}

// Strategy is the create and update strategy of PodCertificateRequests.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate clears the status: requests start pending.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*certificatesv1.PodCertificateRequest).Status = certificatesv1.PodCertificateRequestStatus{}
}

// PrepareForUpdate keeps the stored status.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*certificatesv1.PodCertificateRequest).Status = *old.(*certificatesv1.PodCertificateRequest).Status.DeepCopy()
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return certificates.ValidatePodCertificateRequestCreate(obj.(*certificatesv1.PodCertificateRequest))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return certificates.ValidatePodCertificateRequestUpdate(obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (strategy) Canonicalize(runtime.Object) {}
func (strategy) AllowCreateOnUpdate() bool   { return false }

// AllowUnconditionalUpdate is false as upstream's.
func (strategy) AllowUnconditionalUpdate() bool { return false }

// GetResetFields: server-side apply to the main resource does not own
// status (the strategy keeps the stored one).
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"status"})
}

// statusStrategy is /status (upstream's StatusStrategy).
type statusStrategy struct {
	strategy
	authz authorizer.Authorizer
	now   func() time.Time
}

// PrepareForUpdate keeps the stored spec and the stored instances of the
// Issued, Denied and Failed conditions (when their count is unchanged),
// and stamps conditions without a lastTransitionTime.
func (s statusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	req, o := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
	req.Spec = *o.Spec.DeepCopy()
	for _, t := range []string{certificatesv1.PodCertificateRequestConditionTypeIssued, certificatesv1.PodCertificateRequestConditionTypeDenied, certificatesv1.PodCertificateRequestConditionTypeFailed} {
		keepConditions(req, o, t)
	}
	now := metav1.NewTime(s.now())
	for i := range req.Status.Conditions {
		c := &req.Status.Conditions[i]
		if !c.LastTransitionTime.IsZero() {
			continue
		}
		c.LastTransitionTime = now
		for _, oc := range o.Status.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status && !oc.LastTransitionTime.IsZero() {
				c.LastTransitionTime = oc.LastTransitionTime
				break
			}
		}
	}
}

// keepConditions puts back the stored conditions of type t when the update
// has as many (upstream's preserveConditionInstances).
func keepConditions(req, old *certificatesv1.PodCertificateRequest, t string) {
	var oldIdx, newIdx []int
	for i, c := range old.Status.Conditions {
		if c.Type == t {
			oldIdx = append(oldIdx, i)
		}
	}
	for i, c := range req.Status.Conditions {
		if c.Type == t {
			newIdx = append(newIdx, i)
		}
	}
	if len(oldIdx) != len(newIdx) {
		return
	}
	for i := range oldIdx {
		req.Status.Conditions[newIdx[i]] = *old.Status.Conditions[oldIdx[i]].DeepCopy()
	}
}

// ValidateUpdate validates the status and, when the certificate chain
// changes, requires "sign" on the signer (upstream's StatusStrategy
// ValidateUpdate: a Forbidden cause on spec.signerName, so a 422).
func (s statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	req, o := obj.(*certificatesv1.PodCertificateRequest), old.(*certificatesv1.PodCertificateRequest)
	if errs := certificates.ValidatePodCertificateRequestStatusUpdate(req, o, s.now()); len(errs) > 0 {
		return errs
	}
	if req.Status.CertificateChain == o.Status.CertificateChain {
		return nil
	}
	signer := field.NewPath("spec", "signerName")
	u, ok := request.UserFrom(ctx)
	if !ok || u == nil {
		return field.ErrorList{field.InternalError(signer, fmt.Errorf("cannot determine calling user to perform \"sign\" check"))}
	}
	if s.authz == nil || !admissioncertificates.IsAuthorizedForSignerName(ctx, s.authz, u, "sign", o.Spec.SignerName) {
		return field.ErrorList{field.Forbidden(signer, fmt.Sprintf("User %q is not permitted to \"sign\" for signer %q", u.Name, o.Spec.SignerName))}
	}
	return nil
}

// GetResetFields: server-side apply through /status does not own spec.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return generic.ResetFields(groupVersions, []string{"spec"})
}
