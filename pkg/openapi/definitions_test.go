package openapi

import (
	"slices"
	"sync"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1beta1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1beta1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// testDefs is shared by the package's tests: building the schema tables and
// the parser is the expensive part, and a Definitions is immutable.
var testDefs = sync.OnceValue(NewDefinitions)

func gvk(group, version, kind string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
}

func TestNameForGVK(t *testing.T) {
	t.Parallel()
	d := testDefs()
	tests := []struct {
		gvk    schema.GroupVersionKind
		want   string
		wantOK bool
	}{
		{gvk("", "v1", "ConfigMap"), "io.k8s.api.core.v1.ConfigMap", true},
		{gvk("", "v1", "ConfigMapList"), "io.k8s.api.core.v1.ConfigMapList", true},
		{gvk("apps", "v1", "Deployment"), "io.k8s.api.apps.v1.Deployment", true},
		{gvk("coordination.k8s.io", "v1", "Lease"), "io.k8s.api.coordination.v1.Lease", true},
		{gvk("events.k8s.io", "v1", "Event"), "io.k8s.api.events.v1.Event", true},
		{gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"), "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition", true},
		{gvk("apiregistration.k8s.io", "v1", "APIService"), "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService", true},
		{gvk("", "v1", "Status"), "io.k8s.apimachinery.pkg.apis.meta.v1.Status", true},
		{gvk("", "v1", "APIResourceList"), "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList", true},
		{gvk("coordination.k8s.io", "v1", "DeleteOptions"), "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", true},
		{gvk("apps", "v1", "WatchEvent"), "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent", true},
		// Discovery documents are response bodies, not kinds upstream names
		// in the OpenAPI (their definitions exist, by name).
		{gvk("apidiscovery.k8s.io", "v2", "APIGroupDiscoveryList"), "", false},
		// admission.k8s.io is a webhook payload: in the scheme, not served,
		// no definition.
		{gvk("admission.k8s.io", "v1", "AdmissionReview"), "", false},
		{gvk("example.com", "v1", "Widget"), "", false},
		{gvk("", "v1", "NoSuchKind"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.gvk.String(), func(t *testing.T) {
			got, ok := d.NameForGVK(tt.gvk)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("NameForGVK(%v) = %q, %v; want %q, %v", tt.gvk, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestEveryServedKindHasDefinition proves the generator's inputs cover every
// group-version of the scheme: a kind without a definition could not be
// applied server-side nor explained.
func TestEveryServedKindHasDefinition(t *testing.T) {
	t.Parallel()
	d := testDefs()
	s, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k := range s.AllKnownTypes() {
		switch {
		case k.Version == runtime.APIVersionInternal,
			// Webhook payloads, never served.
			k.Group == admissionv1.GroupName,
			// Registered for the shared kinds' GVK lists only: kapi serves
			// apiextensions.k8s.io and apiregistration.k8s.io at v1.
			k.GroupVersion() == apiextensionsv1beta1.SchemeGroupVersion,
			k.GroupVersion() == apiregistrationv1beta1.SchemeGroupVersion:
			continue
		}
		n++
		if _, ok := d.NameForGVK(k); !ok {
			t.Errorf("no definition for %v", k)
		}
	}
	if n < 700 {
		t.Errorf("checked %d kinds, want the whole of k8s.io/api (over 700 with the shared meta kinds)", n)
	}
}

func TestGVKs(t *testing.T) {
	t.Parallel()
	d := testDefs()
	tests := []struct {
		name     string
		contains []schema.GroupVersionKind
		wantLen  int // 0: only check contains
	}{
		{"io.k8s.api.core.v1.ConfigMap", []schema.GroupVersionKind{gvk("", "v1", "ConfigMap")}, 1},
		{"k8s.io/api/core/v1.ConfigMap", []schema.GroupVersionKind{gvk("", "v1", "ConfigMap")}, 1},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.Status", []schema.GroupVersionKind{gvk("", "v1", "Status")}, 1},
		{"io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions", []schema.GroupVersionKind{
			gvk("", "v1", "DeleteOptions"),
			gvk("apiextensions.k8s.io", "v1", "DeleteOptions"),
			gvk("apiregistration.k8s.io", "v1", "DeleteOptions"),
			gvk("apps", "v1", "DeleteOptions"),
			gvk("coordination.k8s.io", "v1", "DeleteOptions"),
		}, 0},
		{"io.k8s.api.core.v1.PodSpec", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := d.GVKs(tt.name)
			for _, want := range tt.contains {
				if !slices.Contains(got, want) {
					t.Errorf("GVKs(%q) = %v, want it to contain %v", tt.name, got, want)
				}
			}
			if tt.contains == nil && got != nil {
				t.Errorf("GVKs(%q) = %v, want none", tt.name, got)
			}
			if tt.wantLen != 0 && len(got) != tt.wantLen {
				t.Errorf("GVKs(%q) has %d entries, want %d", tt.name, len(got), tt.wantLen)
			}
			if !slices.IsSortedFunc(got, compareGVK) {
				t.Errorf("GVKs(%q) = %v, want sorted by group, version, kind", tt.name, got)
			}
		})
	}
}

func TestDefinitionName(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.Pod"},
		{"k8s.io/api/core/v1.Pod", "io.k8s.api.core.v1.Pod"},
		{"k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
		{"github.com/kapi-dev/kapi/pkg/apis/x/v1.Thing", "com.github.kapi-dev.kapi.pkg.apis.x.v1.Thing"},
	}
	for _, tt := range tests {
		if got := DefinitionName(tt.in); got != tt.want {
			t.Errorf("DefinitionName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

type localType struct{}

func TestNameForObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		obj  any
		want string
	}{
		{&corev1.ConfigMap{}, "io.k8s.api.core.v1.ConfigMap"},
		{(*corev1.ConfigMap)(nil), "io.k8s.api.core.v1.ConfigMap"},
		{metav1.Status{}, "io.k8s.apimachinery.pkg.apis.meta.v1.Status"},
		{&metav1.Patch{}, "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"},
		{&runtime.RawExtension{}, "io.k8s.apimachinery.pkg.runtime.RawExtension"},
		{localType{}, "com.github.kapi-dev.kapi.pkg.openapi.localType"},
	}
	for _, tt := range tests {
		if got := NameForObject(tt.obj); got != tt.want {
			t.Errorf("NameForObject(%T) = %q, want %q", tt.obj, got, tt.want)
		}
	}
}

func TestNamer(t *testing.T) {
	t.Parallel()
	d := testDefs()
	name, ext := d.Namer("k8s.io/api/coordination/v1.Lease")
	if name != "io.k8s.api.coordination.v1.Lease" {
		t.Errorf("name = %q, want io.k8s.api.coordination.v1.Lease", name)
	}
	want := []any{map[string]any{"group": "coordination.k8s.io", "version": "v1", "kind": "Lease"}}
	if got := ext[ExtensionGVK]; !jsonEqual(t, got, want) {
		t.Errorf("extension = %v, want %v", got, want)
	}
	if _, ext := d.Namer("io.k8s.api.core.v1.PodSpec"); ext != nil {
		t.Errorf("PodSpec extensions = %v, want none", ext)
	}
	var _ func(string) (string, spec.Extensions) = d.Namer
}
