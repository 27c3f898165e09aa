package certificates

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"

	certvalidation "github.com/kapi-dev/kapi/pkg/controlplane/validation/certificates"
)

// recognizer is one kind of request the approver approves when the
// requester holds permission (upstream's csrRecognizer).
type recognizer struct {
	recognize  func(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool
	permission authorizationv1.ResourceAttributes
	message    string
}

// recognizers are upstream's (sarapprove.go): a node renewing its own
// client certificate, then any kubelet client certificate.
var recognizers = []recognizer{
	{
		recognize:  isSelfNodeClient,
		permission: authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Verb: "create", Subresource: "selfnodeclient", Version: "*"},
		message:    "Auto approving self kubelet client certificate after SubjectAccessReview.",
	},
	{
		recognize:  isNodeClient,
		permission: authorizationv1.ResourceAttributes{Group: "certificates.k8s.io", Resource: "certificatesigningrequests", Verb: "create", Subresource: "nodeclient", Version: "*"},
		message:    "Auto approving kubelet client certificate after SubjectAccessReview.",
	},
}

func isNodeClient(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.SignerName == certificatesv1.KubeAPIServerClientKubeletSignerName && CheckKubeletClient(req, csr.Spec.Usages) == nil
}

func isSelfNodeClient(csr *certificatesv1.CertificateSigningRequest, req *x509.CertificateRequest) bool {
	return csr.Spec.Username == req.Subject.CommonName && isNodeClient(csr, req)
}

// approver is the csrapproving controller.
type approver struct {
	client kubernetes.Interface
}

// NewApprover returns the csrapproving controller: it asks the server's
// authorizer (a SubjectAccessReview) whether the requester may have its
// kubelet client request approved.
func NewApprover(client kubernetes.Interface, csrs certinformers.CertificateSigningRequestInformer, logger *slog.Logger) (*Controller, error) {
	a := &approver{client: client}
	return newController("csrapproving", client, csrs, logger, 0, a.handle, true)
}

func (a *approver) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if len(csr.Status.Certificate) != 0 {
		return nil
	}
	if approved, denied := approval(csr); approved || denied {
		return nil
	}
	req, err := certvalidation.ParseCSR(csr.Spec.Request)
	if err != nil {
		return fmt.Errorf("unable to parse csr %q: %w", csr.Name, err)
	}
	var tried []string
	for _, r := range recognizers {
		if !r.recognize(csr, req) {
			continue
		}
		tried = append(tried, r.permission.Subresource)
		allowed, err := a.authorize(ctx, csr, r.permission)
		if err != nil {
			return err
		}
		if !allowed {
			continue
		}
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type:    certificatesv1.CertificateApproved,
			Status:  corev1.ConditionTrue,
			Reason:  "AutoApproved",
			Message: r.message,
		})
		if _, err := a.client.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("error updating approval for csr: %w", err)
		}
		return nil
	}
	if len(tried) > 0 {
		// Retried with backoff (the requester may be granted the
		// permission later), logged at debug level, as upstream's
		// IgnorableError.
		return ignorableError{fmt.Errorf("recognized csr %q as %v but subject access review was not approved", csr.Name, tried)}
	}
	return nil
}

// ignorableError is a sync failure that is retried but not worth a
// warning.
type ignorableError struct{ error }

func (a *approver) authorize(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, attrs authorizationv1.ResourceAttributes) (bool, error) {
	extra := make(map[string]authorizationv1.ExtraValue, len(csr.Spec.Extra))
	for k, v := range csr.Spec.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: csr.Spec.Username, UID: csr.Spec.UID, Groups: csr.Spec.Groups, Extra: extra,
		ResourceAttributes: &attrs,
	}}
	out, err := a.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("subject access review of csr %q: %w", csr.Name, err)
	}
	return out.Status.Allowed, nil
}
