package csidriver

import (
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Upstream's csidriver strategy: generation 1 on create, bumped by spec
// changes only; attachRequired immutable; updates need a resourceVersion.
func TestStore(t *testing.T) {
	st, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Destroy()
	ctx := registrytest.Context("storage.k8s.io", "v1", "csidrivers", "")
	d := &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "hostpath.csi.k8s.io"}}
	scheme.Scheme.Default(d)
	out, err := st.Create(ctx, d, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// As kube-apiserver v1.37.2: no generation on create, 1 after the
	// first spec change.
	if g := out.(*storagev1.CSIDriver).Generation; g != 0 {
		t.Errorf("generation %d on create, want none", g)
	}
	update := func(mutate func(*storagev1.CSIDriver)) (*storagev1.CSIDriver, error) {
		out, _, err := st.Update(ctx, d.Name, registrytest.Mutated{Mutate: func(o runtime.Object) { mutate(o.(*storagev1.CSIDriver)) }}, nil, nil, false, &metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		return out.(*storagev1.CSIDriver), nil
	}
	got, err := update(func(d *storagev1.CSIDriver) { d.Labels = map[string]string{"a": "b"} })
	if err != nil || got.Generation != 0 {
		t.Fatalf("metadata change: generation %v, %v", got, err)
	}
	got, err = update(func(d *storagev1.CSIDriver) { *d.Spec.PodInfoOnMount = true })
	if err != nil || got.Generation != 1 {
		t.Fatalf("spec change: %v, %v", got, err)
	}
	_, err = update(func(d *storagev1.CSIDriver) { *d.Spec.AttachRequired = false })
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid spec.attachedRequired" {
		t.Errorf("attachRequired change: %s", got)
	}
	if Strategy.AllowUnconditionalUpdate() {
		t.Error("unconditional updates allowed")
	}
}
