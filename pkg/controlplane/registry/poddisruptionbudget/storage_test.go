package poddisruptionbudget

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// TestDocsManifestStoredAsIs: policy/v1 has no defaulting upstream (no
// pkg/apis/policy/v1/defaults.go); the documentation's budget is stored
// as written, with an empty status.
func TestDocsManifestStoredAsIs(t *testing.T) {
	b, err := os.ReadFile("testdata/pdb-docs-zookeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := scheme.Codecs.UniversalDecoder(policyv1.SchemeGroupVersion).Decode(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := yaml.Marshal(obj)
	want, _ := yaml.Marshal(plain)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("decoding changed the budget (-want +got):\n%s", diff)
	}
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("policy", "v1", "poddisruptionbudgets", "ns")
	in := obj.(*policyv1.PodDisruptionBudget)
	in.Status.DisruptionsAllowed = 5
	out, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb := out.(*policyv1.PodDisruptionBudget)
	if pdb.Status.DisruptionsAllowed != 0 || pdb.Generation != 1 || pdb.Spec.MinAvailable.String() != "2" {
		t.Errorf("stored %+v", pdb)
	}
	// Spec updates are allowed and bump the generation; /status writes
	// the status only.
	upd := pdb.DeepCopy()
	upd.Spec.MinAvailable = ptr.To(intstr.FromString("50%"))
	out, _, err = store.Update(ctx, pdb.Name, registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*policyv1.PodDisruptionBudget).Generation; got != 2 {
		t.Errorf("generation %d after a spec change", got)
	}
	out, _, err = status.Update(ctx, pdb.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		p := o.(*policyv1.PodDisruptionBudget)
		p.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 2, DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*policyv1.PodDisruptionBudget).Status.DisruptionsAllowed; got != 1 {
		t.Errorf("disruptionsAllowed %d after /status", got)
	}
	_, _, err = status.Update(ctx, pdb.Name, registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*policyv1.PodDisruptionBudget).Status.ExpectedPods = -1
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid status.expectedPods" {
		t.Errorf("negative expectedPods: %s", got)
	}
}

func TestStripV1beta1Label(t *testing.T) {
	sel := &metav1.LabelSelector{
		MatchLabels: map[string]string{"app": "x", v1beta1EmptySelectorLabel: "y"},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: v1beta1EmptySelectorLabel, Operator: metav1.LabelSelectorOpExists},
			{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}},
		},
	}
	stripV1beta1Label(sel)
	want := &metav1.LabelSelector{
		MatchLabels:      map[string]string{"app": "x"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}},
	}
	if diff := cmp.Diff(want, sel); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The stand-in selectors themselves are kept.
	none := matchNoneSelector.DeepCopy()
	stripV1beta1Label(none)
	if diff := cmp.Diff(matchNoneSelector, none); diff != "" {
		t.Errorf("match-none selector changed:\n%s", diff)
	}
}

func TestPDBTable(t *testing.T) {
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "zk-pdb", CreationTimestamp: metav1.NewTime(time.Now().Add(-48 * time.Hour))},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromString("25%"))},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1},
	}
	tbl, err := TableConvertor.ConvertToTable(context.Background(), pdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	// Upstream's printers.go podDisruptionBudgetColumnDefinitions.
	if got := strings.Join(names, ","); got != "Name,Min Available,Max Unavailable,Allowed Disruptions,Age" {
		t.Errorf("columns %s", got)
	}
	want := []any{"zk-pdb", "N/A", "25%", int64(1), "2d"}
	for i, w := range want {
		if tbl.Rows[0].Cells[i] != w {
			t.Errorf("cell %s = %#v, want %#v", names[i], tbl.Rows[0].Cells[i], w)
		}
	}
}
