package apiextensions

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// selectableCRD serves widgets with spec.color, spec.size and a boolean
// spec.on as field selectors.
func selectableCRD() *apiextensionsv1.CustomResourceDefinition {
	crd := crdtest.NewCRD("select.example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	v := &crd.Spec.Versions[0]
	spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Required = nil
	spec.Properties["on"] = apiextensionsv1.JSONSchemaProps{Type: "boolean"}
	v.Schema.OpenAPIV3Schema.Properties["spec"] = spec
	v.SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.color"}, {JSONPath: ".spec.size"}, {JSONPath: ".spec.on"}}
	return crd
}

func TestSelectableFieldsServing(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx := context.Background()
	crd := selectableCRD()
	if _, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitEstablished(t, ts.crdClient(t), crd.Name)
	r := ts.dynamic(t).Resource(gvr("select.example.com", "v1", "widgets")).Namespace("ns1")
	eventually(t, waitTimeout, "widgets served", func() bool {
		_, err := r.List(ctx, metav1.ListOptions{})
		return err == nil
	})
	for name, spec := range map[string]map[string]any{
		"red1":  {"color": "red", "size": int64(1), "on": true},
		"blue2": {"color": "blue", "size": int64(2), "on": false},
		"blue3": {"color": "blue", "size": int64(3)},
		"none":  {},
	} {
		if _, err := r.Create(ctx, widget("select.example.com/v1", "Widget", name, spec), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w, err := r.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.color=blue", ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	for _, tc := range []struct {
		selector string
		want     []string
		err      string
	}{
		{selector: "spec.color=blue", want: []string{"blue2", "blue3"}},
		{selector: "spec.color!=blue", want: []string{"none", "red1"}},
		{selector: "spec.color=", want: []string{"none"}},
		{selector: "spec.size=2", want: []string{"blue2"}},
		{selector: "spec.on=true", want: []string{"red1"}},
		{selector: "spec.on=false", want: []string{"blue2"}},
		{selector: "spec.color=blue,metadata.name=blue3", want: []string{"blue3"}},
		{selector: "metadata.namespace=ns1,spec.color=red", want: []string{"red1"}},
		{selector: "spec.name=x", err: "field label not supported: spec.name"},
		{selector: "status.ready=true", err: "field label not supported: status.ready"},
	} {
		t.Run(tc.selector, func(t *testing.T) {
			l, err := r.List(ctx, metav1.ListOptions{FieldSelector: tc.selector})
			if tc.err != "" {
				if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want 400 %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, i := range l.Items {
				got = append(got, i.GetName())
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}

	// The watch sees the blue ones, then a widget turning blue (as an
	// addition) and one leaving blue (as a deletion).
	var got []string
	for len(got) < 2 {
		got = append(got, nextEvent(t, w).Object.(metav1.Object).GetName())
	}
	sort.Strings(got)
	if want := []string{"blue2", "blue3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("initial watch events: got %v, want %v", got, want)
	}
	red, _ := r.Get(ctx, "red1", metav1.GetOptions{})
	red.Object["spec"].(map[string]any)["color"] = "blue"
	if _, err := r.Update(ctx, red, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Added || ev.Object.(metav1.Object).GetName() != "red1" {
		t.Fatalf("got %s %v, want ADDED red1", ev.Type, ev.Object.(metav1.Object).GetName())
	}
	b2, _ := r.Get(ctx, "blue2", metav1.GetOptions{})
	b2.Object["spec"].(map[string]any)["color"] = "red"
	if _, err := r.Update(ctx, b2, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(t, w); ev.Type != watch.Deleted || ev.Object.(metav1.Object).GetName() != "blue2" {
		t.Fatalf("got %s %v, want DELETED blue2", ev.Type, ev.Object.(metav1.Object).GetName())
	}

	// Without selectable fields, a field selector on spec is refused the
	// same way; a CRD update adding one is served.
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.Versions[0].SelectableFields = []apiextensionsv1.SelectableField{{JSONPath: ".spec.name"}}
	if _, err := crds.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, waitTimeout, "spec.name selectable", func() bool {
		_, err := r.List(ctx, metav1.ListOptions{FieldSelector: "spec.name=x"})
		return err == nil
	})
	if _, err := r.List(ctx, metav1.ListOptions{FieldSelector: "spec.color=blue"}); !apierrors.IsBadRequest(err) ||
		!strings.Contains(err.Error(), "field label not supported: spec.color") {
		t.Fatalf("spec.color after it stopped being selectable: got %v, want 400", err)
	}
}
