package controlplane_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// TestAppsStoredForm creates each manifest of the apps/v1 defaulting
// corpus (pkg/api/defaults/appsv1/testdata/<case>.in.yaml) through a full server,
// as kubectl sends it (YAML), and compares what a GET returns with the
// case's decoded form (<case>.want.yaml, whose sources that directory's
// README lists) plus what upstream's strategies add on create
// (pkg/registry/apps/*/strategy.go, v1.37): metadata.generation 1, an
// empty status (controllerrevisions have neither), and for daemonsets the template generation annotation
// deprecated.daemonset.template.generation "1" (or the larger one given).
func TestAppsStoredForm(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testAppsStoredForm(t) })
	t.Run("etcd", func(t *testing.T) { testAppsStoredForm(t, kapitest.WithEmbeddedEtcd()) })
}

func testAppsStoredForm(t *testing.T, opts ...kapitest.Option) {
	srv := kapitest.Start(t, opts...)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ins, err := filepath.Glob("../api/defaults/appsv1/testdata/*.in.yaml")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	plain := scheme.Codecs.UniversalDeserializer()
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			wantBytes, err := os.ReadFile(filepath.Join(filepath.Dir(in), name+".want.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			want, gvk, err := plain.Decode(wantBytes, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			m := want.(metav1.Object)
			if m.GetNamespace() == "" {
				m.SetNamespace("default")
			}
			if gvk.Kind != "ControllerRevision" { // its strategy keeps no generation
				m.SetGeneration(1)
			}
			resource := strings.ToLower(gvk.Kind) + "s"
			if gvk.Kind == "DaemonSet" {
				// The strategy starts the template generation at 1 or
				// keeps a larger one given.
				a := m.GetAnnotations()
				if a == nil {
					a = map[string]string{}
				}
				gen, _ := strconv.ParseInt(a[appsv1.DeprecatedTemplateGeneration], 10, 64)
				a[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(max(gen, 1), 10)
				m.SetAnnotations(a)
			}

			rc := cs.AppsV1().RESTClient()
			if err := rc.Post().Namespace(m.GetNamespace()).Resource(resource).SetHeader("Content-Type", "application/yaml").
				Body(body).Do(t.Context()).Error(); err != nil {
				t.Fatalf("create %s: %v", in, err)
			}
			raw, err := rc.Get().Namespace(m.GetNamespace()).Resource(resource).Name(m.GetName()).DoRaw(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := plain.Decode(raw, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			gm := got.(metav1.Object)
			created := gm.GetCreationTimestamp()
			if gm.GetUID() == "" || gm.GetResourceVersion() == "" || created.IsZero() || len(gm.GetManagedFields()) == 0 {
				t.Errorf("stored object lacks uid, resourceVersion, creationTimestamp or managedFields: %+v", gm)
			}
			gm.SetUID("")
			gm.SetResourceVersion("")
			gm.SetCreationTimestamp(metav1.Time{})
			gm.SetManagedFields(nil)
			if diff := cmp.Diff(storedYAML(t, want), storedYAML(t, got)); diff != "" {
				t.Errorf("stored %s differs (-want +got):\n%s", name, diff)
			}
		})
	}
}

func storedYAML(t *testing.T, obj runtime.Object) string {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
