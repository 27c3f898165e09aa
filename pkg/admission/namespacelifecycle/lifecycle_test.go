package namespacelifecycle

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// namespaces is a NamespaceGetter over a fixed set.
type namespaces map[string]corev1.NamespacePhase

func (n namespaces) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	phase, ok := n[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("namespaces"), name)
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NamespaceStatus{Phase: phase}}, nil
}

func TestValidate(t *testing.T) {
	p := New(namespaces{"live": corev1.NamespaceActive, "dying": corev1.NamespaceTerminating})
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	lsar := schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "localsubjectaccessreviews"}
	ns := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	for _, tc := range []struct {
		name string
		a    admission.Attributes
		want func(error) bool
	}{
		{"create in a live namespace", admission.Attributes{Operation: admission.Create, Resource: cm, Namespace: "live"}, isNil},
		{"create in a missing namespace", admission.Attributes{Operation: admission.Create, Resource: cm, Namespace: "gone"}, apierrors.IsNotFound},
		{"create in a terminating namespace", admission.Attributes{Operation: admission.Create, Resource: cm, Namespace: "dying"}, apierrors.IsForbidden},
		{"access review in a missing namespace", admission.Attributes{Operation: admission.Create, Resource: lsar, Namespace: "gone"}, isNil},
		{"access review in a terminating namespace", admission.Attributes{Operation: admission.Create, Resource: lsar, Namespace: "dying"}, isNil},
		{"delete kube-system", admission.Attributes{Operation: admission.Delete, Resource: ns, Name: "kube-system"}, apierrors.IsForbidden},
		{"delete another namespace", admission.Attributes{Operation: admission.Delete, Resource: ns, Name: "live"}, isNil},
	} {
		if err := p.Validate(context.Background(), tc.a); !tc.want(err) {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}

func isNil(err error) bool { return err == nil }
