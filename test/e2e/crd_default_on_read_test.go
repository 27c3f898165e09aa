package e2e

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// TestCRDDefaultAddedLaterShowsOnRead: a CRD's schema changes apply to
// objects stored before, on every read (get, list and the objects a new
// watch starts with), as upstream, which prunes and defaults objects when
// it reads them from storage ("Defaulting happens on the object ... when
// reading from etcd", Kubernetes docs, "Extend the Kubernetes API with
// CustomResourceDefinitions", Defaulting; pruning: apiextensions-apiserver
// v0.37 customresource_handler.go, schemaCoercingDecoder): a default
// added later shows, a field the schema no longer declares is gone. On
// etcd the watch cache and on memory the decoded list state hold objects
// decoded under the old schema: a get and a list made before the update
// fill them first. A null in a non-nullable field without a default is
// dropped on create, as upstream does when it decodes the body (checked
// against kube-apiserver v1.37.2: 201 with spec {}).
func TestCRDDefaultAddedLaterShowsOnRead(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		crds := apiextensionsclient.NewForConfigOrDie(e.config()).ApiextensionsV1().CustomResourceDefinitions()
		group := fmt.Sprintf("dor%d.e2e.kapi.dev", nsCounter.Add(1))
		crd := &apiextensionsv1.CustomResourceDefinition{
			ObjectMeta: metav1.ObjectMeta{Name: "lamps." + group},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: group,
				Scope: apiextensionsv1.NamespaceScoped,
				Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "lamps", Singular: "lamp", Kind: "Lamp", ListKind: "LampList"},
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name: "v1", Served: true, Storage: true,
					Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
						Type: "object",
						Properties: map[string]apiextensionsv1.JSONSchemaProps{
							"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"name": {Type: "string"}, "size": {Type: "integer"}}},
						},
					}},
				}},
			},
		}
		if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.Name, metav1.DeleteOptions{}) })
		ns := e.newNamespace(t)
		ri := dynamic.NewForConfigOrDie(e.config()).Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "lamps"}).Namespace(ns)
		eventually(t, time.Minute, "create a lamp", func() error {
			_, err := ri.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": group + "/v1", "kind": "Lamp",
				"metadata": map[string]any{"name": "l1"},
				"spec":     map[string]any{"name": "a", "size": int64(3)},
			}}, metav1.CreateOptions{})
			return err
		})
		if _, err := ri.Get(ctx, "l1", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		if l, err := ri.List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 1 {
			t.Fatalf("list: %v", err)
		}

		cur, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		spec := cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["color"] = apiextensionsv1.JSONSchemaProps{Type: "string", Default: &apiextensionsv1.JSON{Raw: []byte(`"blue"`)}}
		delete(spec.Properties, "size")
		cur.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
		if _, err := crds.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update CRD: %v", err)
		}
		want := map[string]any{"name": "a", "color": "blue"}
		readsAsWanted := func(u *unstructured.Unstructured) bool { return reflect.DeepEqual(u.Object["spec"], want) }
		eventually(t, time.Minute, "the default on get, list and watch", func() error {
			got, err := ri.Get(ctx, "l1", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !readsAsWanted(got) {
				return fmt.Errorf("get: spec %v, want %v", got.Object["spec"], want)
			}
			l, err := ri.List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(l.Items) != 1 || !readsAsWanted(&l.Items[0]) {
				return fmt.Errorf("list: %v, want one lamp with spec %v", l.Items, want)
			}
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			w, err := ri.Watch(wctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return err
			}
			defer w.Stop()
			ev, ok := <-w.ResultChan()
			if !ok {
				return fmt.Errorf("watch closed before its first event")
			}
			u, isU := ev.Object.(*unstructured.Unstructured)
			if !isU || !readsAsWanted(u) {
				return fmt.Errorf("watch: first event %s %v, want the lamp with spec %v", ev.Type, ev.Object, want)
			}
			return nil
		})

		created, err := ri.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": group + "/v1", "kind": "Lamp",
			"metadata": map[string]any{"name": "l2"},
			"spec":     map[string]any{"name": nil},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create with a null name: %v", err)
		}
		if want := map[string]any{"color": "blue"}; !reflect.DeepEqual(created.Object["spec"], want) {
			t.Errorf("created with a null name: spec %v, want %v", created.Object["spec"], want)
		}
	})
}
