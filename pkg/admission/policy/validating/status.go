package validating

import (
	"context"
	"fmt"
	"sync"

	arv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	arv1apply "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// StatusControllerName is the field manager of the status writes, the
// name of upstream's controller that makes them
// (pkg/controller/validatingadmissionpolicystatus, run by
// kube-controller-manager as validatingadmissionpolicy-status-controller).
const StatusControllerName = "validatingadmissionpolicy-status-controller"

// ApplyStatusWriter writes a policy's status as upstream's status
// controller does: a forced server-side apply of status.observedGeneration
// and status.typeChecking (nothing else: upstream writes no conditions)
// by the field manager [StatusControllerName], through the API (config
// is the loopback client's).
type ApplyStatusWriter struct {
	config func() (*rest.Config, error)
	once   sync.Once
	client kubernetes.Interface
	err    error
}

// NewApplyStatusWriter returns a writer through config().
func NewApplyStatusWriter(config func() (*rest.Config, error)) *ApplyStatusWriter {
	return &ApplyStatusWriter{config: config}
}

// UpdateStatus applies p's observedGeneration and typeChecking.
func (w *ApplyStatusWriter) UpdateStatus(ctx context.Context, p *arv1.ValidatingAdmissionPolicy) error {
	w.once.Do(func() {
		cfg, err := w.config()
		if err != nil {
			w.err = fmt.Errorf("loopback client: %w", err)
			return
		}
		cfg = rest.CopyConfig(cfg)
		cfg.UserAgent = StatusControllerName
		w.client, w.err = kubernetes.NewForConfig(cfg)
	})
	if w.err != nil {
		return w.err
	}
	tc := arv1apply.TypeChecking()
	if p.Status.TypeChecking != nil {
		for _, ew := range p.Status.TypeChecking.ExpressionWarnings {
			tc.WithExpressionWarnings(arv1apply.ExpressionWarning().WithFieldRef(ew.FieldRef).WithWarning(ew.Warning))
		}
	}
	ac := arv1apply.ValidatingAdmissionPolicy(p.Name).WithStatus(arv1apply.ValidatingAdmissionPolicyStatus().
		WithObservedGeneration(p.Status.ObservedGeneration).WithTypeChecking(tc))
	_, err := w.client.AdmissionregistrationV1().ValidatingAdmissionPolicies().ApplyStatus(ctx, ac, metav1.ApplyOptions{FieldManager: StatusControllerName, Force: true})
	return err
}
