package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// upstreamTokens are the continue tokens kube-apiserver v1.37.2
// (/work/refbin/kube-apiserver on etcd, default flags; session 15) gave
// for the first page (limit=1) of these lists, after: namespaces fl15-a
// and fl15-b labelled fl15=yes; configmaps cm1, cm2, cm3 (labelled
// fl15=yes) and events e1, e2 in fl15-a; CRDs widgets (namespaced) and
// gadgets (cluster-scoped) of group fl15.example.com with widgets w1, w2
// in fl15-a and gadgets g1, g2. The start key has the form of the layer
// that served the page: the watch cache ("/cm1\u0000") for every resource
// but events, which kube-apiserver does not cache by default and lists
// from etcd ("e1\u0000"). In the paths and tokens, fl15-a stands for the
// test's namespace, fl15=yes for its label and fl15.example.com for its
// CRDs' group.
var upstreamTokens = []struct {
	path  string
	token string
}{
	{"/api/v1/namespaces/fl15-a/configmaps", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk1LCJzdGFydCI6Ii9jbTFcdTAwMDAifQ"},
	{"/api/v1/configmaps?labelSelector=fl15%3Dyes", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk1LCJzdGFydCI6Ii9mbDE1LWEvY20xXHUwMDAwIn0"},
	{"/api/v1/namespaces?labelSelector=fl15%3Dyes", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk1LCJzdGFydCI6Ii9mbDE1LWFcdTAwMDAifQ"},
	{"/api/v1/namespaces/fl15-a/events", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk2LCJzdGFydCI6ImUxXHUwMDAwIn0"},
	{"/apis/events.k8s.io/v1/namespaces/fl15-a/events", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk2LCJzdGFydCI6ImUxXHUwMDAwIn0"},
	{"/apis/fl15.example.com/v1/namespaces/fl15-a/widgets", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk2LCJzdGFydCI6Ii93MVx1MDAwMCJ9"},
	{"/apis/fl15.example.com/v1/widgets", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk2LCJzdGFydCI6Ii9mbDE1LWEvdzFcdTAwMDAifQ"},
	{"/apis/fl15.example.com/v1/gadgets", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6OTk2LCJzdGFydCI6Ii9nMVx1MDAwMCJ9"},
}

// TestContinueTokensAsUpstream: on every backend, the first page's
// continue token of each list above is kube-apiserver's, byte for byte,
// once its revision, namespace and names are the test's; and the next
// page follows it.
func TestContinueTokensAsUpstream(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		// The namespace named first stands for fl15-a.
		ns, ns2 := e.newNamespace(t), e.newNamespace(t)
		ns, ns2 = min(ns, ns2), max(ns, ns2)
		label := strings.ReplaceAll(ns, "-", "")
		group := label + ".tokens.example.com"
		for _, n := range []string{ns, ns2} {
			got, err := e.cs.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got.Labels = map[string]string{"fl15": label}
			if _, err := e.cs.CoreV1().Namespaces().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"cm1", "cm2", "cm3"} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"fl15": label}}}
			if _, err := e.cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, name := range []string{"e1", "e2"} {
			ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name}, InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Name: "cm1", Namespace: ns}}
			if _, err := e.cs.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		dyn := dynamic.NewForConfigOrDie(e.config())
		for _, c := range []struct {
			plural, kind string
			scope        apiextensionsv1.ResourceScope
			names        []string
		}{{"widgets", "Widget", apiextensionsv1.NamespaceScoped, []string{"w1", "w2"}}, {"gadgets", "Gadget", apiextensionsv1.ClusterScoped, []string{"g1", "g2"}}} {
			createCRD(t, e, &apiextensionsv1.CustomResourceDefinition{
				ObjectMeta: metav1.ObjectMeta{Name: c.plural + "." + group},
				Spec: apiextensionsv1.CustomResourceDefinitionSpec{
					Group: group, Scope: c.scope,
					Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: c.plural, Kind: c.kind},
					Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
						Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTo(true)}}}},
				},
			})
			var r dynamic.ResourceInterface = dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: c.plural})
			if c.scope == apiextensionsv1.NamespaceScoped {
				r = dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: c.plural}).Namespace(ns)
			}
			for _, name := range c.names {
				obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": group + "/v1", "kind": c.kind, "metadata": map[string]any{"name": name}}}
				eventually(t, time.Minute, "create "+c.plural+" "+name, func() error {
					_, err := r.Create(ctx, obj, metav1.CreateOptions{})
					return err
				})
			}
		}
		ours := strings.NewReplacer("fl15-a", ns, "fl15%3Dyes", "fl15%3D"+label, "fl15.example.com", group)
		for _, u := range upstreamTokens {
			path := ours.Replace(u.path)
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			first := listPage(t, e, path+sep+"limit=1")
			// kube-apiserver's token for this list: the same JSON with
			// the test's revision and names.
			data, err := base64.RawURLEncoding.DecodeString(u.token)
			if err != nil {
				t.Fatal(err)
			}
			var tok struct {
				V     string `json:"v"`
				RV    int64  `json:"rv"`
				Start string `json:"start"`
			}
			if err := json.Unmarshal(data, &tok); err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(string(data), fmt.Sprintf(`"rv":%d,`, tok.RV), `"rv":`+first.Metadata.ResourceVersion+`,`, 1)
			want = base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(want, "fl15-a", ns, 1)))
			if first.Metadata.Continue != want {
				got, _ := base64.RawURLEncoding.DecodeString(first.Metadata.Continue)
				t.Errorf("%s: continue %s (%s), kube-apiserver's %s (%s)", path, first.Metadata.Continue, got, want, mustDecode(t, want))
				continue
			}
			// The token resumes after the first page's item.
			next := listPage(t, e, path+sep+"limit=1&continue="+first.Metadata.Continue)
			key := func(p tokenPage) string {
				if len(p.Items) != 1 {
					t.Fatalf("%s: %d items in a page of 1", path, len(p.Items))
				}
				return p.Items[0].Metadata.Namespace + "/" + p.Items[0].Metadata.Name
			}
			if a, b := key(first), key(next); a >= b {
				t.Errorf("%s: page after %s is %s", path, a, b)
			}
		}
	})
}

type tokenPage struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
		Continue        string `json:"continue"`
	} `json:"metadata"`
	Items []struct {
		Metadata struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	} `json:"items"`
}

func listPage(t *testing.T, e *env, path string) tokenPage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := e.cs.Discovery().RESTClient().Get().AbsPath("/").RequestURI(path).DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	var p tokenPage
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return p
}

func mustDecode(t *testing.T, tok string) string {
	t.Helper()
	data, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
