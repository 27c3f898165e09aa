package serviceaccount

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func TestServiceAccountStore(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	if got := store.ShortNames(); !slices.Equal(got, []string{"sa"}) {
		t.Errorf("got short names %v, want [sa]", got)
	}
	w := &registrytest.Warnings{}
	ctx := warning.WithRecorder(registrytest.Context("", "v1", "serviceaccounts", "default"), w)

	// Secret references keep only their names.
	obj, err := store.Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "builder"},
		Secrets:    []corev1.ObjectReference{{Name: "tok", Namespace: "other", Kind: "Secret", UID: "u"}},
	}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got, want := obj.(*corev1.ServiceAccount).Secrets, []corev1.ObjectReference{{Name: "tok"}}; !slices.Equal(got, want) {
		t.Errorf("got secrets %v, want %v", got, want)
	}
	if len(w.List()) != 0 {
		t.Errorf("got warnings %q, want none", w.List())
	}

	// The deprecated annotation is accepted with a warning.
	_, err = store.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Name:        "legacy",
		Annotations: map[string]string{EnforceMountableSecretsAnnotation: "true"},
	}}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if got := w.List(); len(got) != 1 || !strings.Contains(got[0], "deprecated in v1.32+") {
		t.Errorf("got warnings %q, want the deprecation warning", got)
	}

	// Names are DNS subdomains.
	_, err = store.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "Builder"}}, nil, &metav1.CreateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid metadata.name"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}
}

// The expected table is kube-apiserver v1.37.2's, observed on that binary
// (built by hack/build-reference.sh) and in its printServiceAccount.
func TestServiceAccountTable(t *testing.T) {
	sa := &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: "default", CreationTimestamp: metav1.NewTime(time.Now().Add(-5 * time.Minute))},
		Secrets:    []corev1.ObjectReference{{Name: "a"}, {Name: "b"}},
	}
	tbl, err := TableConvertor.ConvertToTable(t.Context(), sa, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if got, want := strings.Join(cols, ","), "Name,Age"; got != want {
		t.Errorf("got columns %s, want %s", got, want)
	}
	if got, want := tbl.Rows[0].Cells, []any{"default", "5m"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
}
