package controlplane_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// TestCorpusStoredThroughServer sends each manifest of the core/v1,
// batch/v1 and autoscaling corpora (pkg/api/defaults/{corev1,batchv1,
// autoscalingv2}/testdata/<case>.in.yaml) and the policy/v1 budget
// (registry/poddisruptionbudget/testdata) to a full server as kubectl
// does (YAML), reads the object back and checks that every field of the
// case's expected defaulted form (<case>.want.yaml; sources in each
// corpus's README) is stored with that value: the decoding defaults reach
// storage unchanged on the server's write path, memory and embedded etcd.
// What strategies and admission plugins add on create (status, generation,
// a Job's generated selector, the ServiceAccount plugin's token volume,
// DefaultTolerationSeconds' tolerations) comes on top: fields and list
// items beyond the expected ones are allowed here and proven by those
// components' own tests. (The apps/v1 corpus is compared whole,
// TestAppsStoredForm.)
func TestCorpusStoredThroughServer(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testCorpusStored(t) })
	t.Run("etcd", func(t *testing.T) { testCorpusStored(t, kapitest.WithEmbeddedEtcd()) })
}

func testCorpusStored(t *testing.T, opts ...kapitest.Option) {
	srv := kapitest.Start(t, opts...)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	var cases [][2]string // in, want
	for _, dir := range []string{"../api/defaults/corev1/testdata", "../api/defaults/batchv1/testdata", "../api/defaults/autoscalingv2/testdata"} {
		ins, err := filepath.Glob(filepath.Join(dir, "*.in.yaml"))
		if err != nil || len(ins) == 0 {
			t.Fatalf("no corpus in %s: %v", dir, err)
		}
		for _, in := range ins {
			cases = append(cases, [2]string{in, strings.TrimSuffix(in, ".in.yaml") + ".want.yaml"})
		}
	}
	// The budget is stored as written (policy/v1 has no defaults).
	pdb := "registry/poddisruptionbudget/testdata/pdb-docs-zookeeper.yaml"
	cases = append(cases, [2]string{pdb, pdb})

	// Defaulting cases upstream's validation refuses on create (they
	// exercise defaults of fields a valid object cannot combine): the
	// server must refuse them too, with upstream's messages
	// (pkg/apis/core/validation/validation.go, v1.37).
	refused := map[string]string{
		"node-capacity":  `status.capacity.example.com/dongle: Invalid value: "2m": must be an integer`,
		"pod-containers": "spec.ephemeralContainers: Forbidden: cannot be set on create",
		"pod-volumes":    "scaleIO.volumeName: Required value",
	}

	plain := scheme.Codecs.UniversalDeserializer()
	rc := cs.CoreV1().RESTClient()
	for i, c := range cases {
		name := strings.TrimSuffix(filepath.Base(c[0]), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(c[0])
			if err != nil {
				t.Fatal(err)
			}
			wantBytes, err := os.ReadFile(c[1])
			if err != nil {
				t.Fatal(err)
			}
			_, inGVK, err := plain.Decode(body, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, wantGVK, err := plain.Decode(wantBytes, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			m := want.(metav1.Object)
			// Each case's own name: the corpora reuse names (and nodes
			// and volumes are cluster-scoped).
			m.SetName(fmt.Sprintf("%s-%d", m.GetName(), i))
			namespaced := wantGVK.Kind != "Node" && wantGVK.Kind != "PersistentVolume"
			if namespaced && m.GetNamespace() == "" {
				m.SetNamespace("default")
			}
			if namespaced && m.GetNamespace() != "default" {
				ensureNamespace(t, cs, m.GetNamespace())
			}
			var sent map[string]any
			if err := yaml.Unmarshal(body, &sent); err != nil {
				t.Fatal(err)
			}
			sent["metadata"].(map[string]any)["name"] = m.GetName()
			sentJSON, err := json.Marshal(sent)
			if err != nil {
				t.Fatal(err)
			}
			sentYAML, err := yaml.JSONToYAML(sentJSON)
			if err != nil {
				t.Fatal(err)
			}

			path := func(gv string) string {
				p := "/apis/" + gv
				if gv == "v1" {
					p = "/api/v1"
				}
				if namespaced {
					p += "/namespaces/" + m.GetNamespace()
				}
				return p + "/" + strings.ToLower(wantGVK.Kind) + "s"
			}
			err = rc.Post().AbsPath(path(inGVK.GroupVersion().String())).SetHeader("Content-Type", "application/yaml").
				Body(sentYAML).Do(t.Context()).Error()
			if msg, ok := refused[name]; ok {
				if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), msg) {
					t.Errorf("create %s: got %v, want 422 with %q", c[0], err, msg)
				}
				return
			}
			if err != nil {
				t.Fatalf("create %s: %v", c[0], err)
			}
			if !namespaced {
				t.Cleanup(func() {
					_ = rc.Delete().AbsPath(path(wantGVK.GroupVersion().String()), m.GetName()).Do(t.Context()).Error()
				})
			}
			raw, err := rc.Get().AbsPath(path(wantGVK.GroupVersion().String()), m.GetName()).DoRaw(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var got, wantMap map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(mustJSON(t, want), &wantMap); err != nil {
				t.Fatal(err)
			}
			for _, diff := range contained("", wantMap, got) {
				t.Error(diff)
			}
		})
	}
}

// ensureNamespace creates ns (once) and waits for its default service
// account, which the ServiceAccount admission plugin needs for pods.
func ensureNamespace(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().ServiceAccounts(ns).Get(t.Context(), "default", metav1.GetOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("default service account of %s: %v", ns, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustJSON(t *testing.T, obj runtime.Object) []byte {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// contained lists where want is not contained in got: every key of a
// want map must be in got's with a contained value, every item of a want
// list must be contained in got's item at the same index (got may have
// more items after them), and other values must be equal. A null or
// empty want value (an unset field the typed form renders) needs nothing.
func contained(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			if len(w) == 0 && got == nil {
				return nil
			}
			return []string{fmt.Sprintf("%s: got %v, want an object %v", path, got, w)}
		}
		var out []string
		for k, wv := range w {
			out = append(out, contained(path+"."+k, wv, g[k])...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) < len(w) {
			return []string{fmt.Sprintf("%s: got %v, want a list starting with %v", path, got, w)}
		}
		var out []string
		for i := range w {
			out = append(out, contained(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return out
	case nil:
		return nil
	default:
		if !reflect.DeepEqual(want, got) {
			return []string{fmt.Sprintf("%s: got %v, want %v", path, got, want)}
		}
		return nil
	}
}
