package secret

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func TestSecretStore(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("", "v1", "secrets", "default")
	if got := store.ShortNames(); len(got) != 0 {
		t.Errorf("got short names %v, want none", got)
	}

	// stringData is merged into data (overriding it), never stored; the
	// type defaults to Opaque.
	obj, err := store.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "creds"},
		Data:       map[string][]byte{"user": []byte("old"), "keep": []byte("k")},
		StringData: map[string]string{"user": "admin", "pass": "pw"},
	}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := store.Get(ctx, "creds", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := got.(*corev1.Secret)
	if s.Type != corev1.SecretTypeOpaque {
		t.Errorf("got type %q, want Opaque", s.Type)
	}
	if s.StringData != nil {
		t.Errorf("got stringData %v stored, want none", s.StringData)
	}
	if string(s.Data["user"]) != "admin" || string(s.Data["pass"]) != "pw" || string(s.Data["keep"]) != "k" {
		t.Errorf("got data %q, want user=admin pass=pw keep=k", s.Data)
	}

	// The type cannot change; an update with no type means Opaque.
	tlsSecret, err := store.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": nil, "tls.key": nil},
	}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create tls: %v", err)
	}
	retyped := tlsSecret.(*corev1.Secret).DeepCopy()
	retyped.Type = ""
	_, _, err = store.Update(ctx, "web", registrytest.Updated{Obj: retyped}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueInvalid type"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	// Required keys per type.
	_, err = store.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "token"},
		Type:       corev1.SecretTypeServiceAccountToken,
	}, nil, &metav1.CreateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueRequired metadata.annotations[kubernetes.io/service-account.name]"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	// Immutable secrets keep their data, also through stringData.
	frozen := obj.(*corev1.Secret).DeepCopy()
	frozen.Immutable = ptr(true)
	frozen.ResourceVersion = ""
	if _, _, err := store.Update(ctx, "creds", registrytest.Updated{Obj: frozen}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatalf("make immutable: %v", err)
	}
	frozen.StringData = map[string]string{"pass": "new"}
	_, _, err = store.Update(ctx, "creds", registrytest.Updated{Obj: frozen}, nil, nil, false, &metav1.UpdateOptions{})
	if got, want := registrytest.Causes(t, err), []string{"FieldValueForbidden data"}; !slices.Equal(got, want) {
		t.Errorf("got causes %v, want %v", got, want)
	}

	// The type field selector.
	list, err := store.List(registrytest.Context("", "v1", "secrets", ""), &metainternalversion.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("type", string(corev1.SecretTypeTLS)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, item := range list.(*corev1.SecretList).Items {
		names = append(names, item.Name)
	}
	if !slices.Equal(names, []string{"web"}) {
		t.Errorf("got %v for type=kubernetes.io/tls, want [web]", names)
	}
	_, err = store.List(ctx, &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector("data", "x")})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("got %v for an unknown field selector, want BadRequest", err)
	}
}

func TestSecretTLSWarning(t *testing.T) {
	store, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	w := &registrytest.Warnings{}
	ctx := warning.WithRecorder(registrytest.Context("", "v1", "secrets", "default"), w)
	_, err = store.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": []byte("not a cert"), "tls.key": []byte("not a key")},
	}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if len(w.List()) != 1 || !strings.Contains(w.List()[0], "certificate") {
		t.Errorf("got warnings %q, want one about the certificate", w.List())
	}
}

func TestSecretTable(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "web", CreationTimestamp: metav1.NewTime(time.Now().Add(-49 * time.Hour))},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": nil, "tls.key": nil},
	}
	tbl, err := TableConvertor.ConvertToTable(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range tbl.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if got, want := strings.Join(cols, ","), "Name,Type,Data,Age"; got != want {
		t.Errorf("got columns %s, want %s", got, want)
	}
	if got, want := tbl.Rows[0].Cells, []any{"web", "kubernetes.io/tls", int64(2), "2d1h"}; !slices.Equal(got, want) {
		t.Errorf("got cells %v, want %v", got, want)
	}
}

func TestFieldLabelConversion(t *testing.T) {
	for _, l := range []string{"type", "metadata.name", "metadata.namespace"} {
		if _, _, err := FieldLabelConversion(l, "x"); err != nil {
			t.Errorf("%s: got %v, want accepted", l, err)
		}
	}
	if _, _, err := FieldLabelConversion("data", "x"); err == nil || err.Error() != "field label not supported: data" {
		t.Errorf("got %v, want field label not supported: data", err)
	}
}

func ptr[T any](v T) *T { return &v }
