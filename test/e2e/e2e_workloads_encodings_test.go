package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// workloadPath is where an object of issue 13's point 1 lives: its
// collection's path (namespace filled in) and its Go type's kind.
type workloadPath struct {
	collection, kind, name string
}

// workloadPaths places the objects of mixedManifest (plus a node and a
// controller revision the test adds) under their collections, an
// autoscaler under both of its versions.
func workloadPaths(ns, pv, node string) []workloadPath {
	n := "/namespaces/" + ns
	return []workloadPath{
		{"/api/v1" + n + "/pods", "Pod", "solo"},
		{"/api/v1/nodes", "Node", node},
		{"/api/v1/persistentvolumes", "PersistentVolume", pv},
		{"/api/v1" + n + "/persistentvolumeclaims", "PersistentVolumeClaim", "data"},
		{"/api/v1" + n + "/podtemplates", "PodTemplate", "tmpl"},
		{"/api/v1" + n + "/replicationcontrollers", "ReplicationController", "legacy"},
		{"/api/v1" + n + "/limitranges", "LimitRange", "claims"},
		{"/api/v1" + n + "/resourcequotas", "ResourceQuota", "generous"},
		{"/apis/apps/v1" + n + "/deployments", "Deployment", "web"},
		{"/apis/apps/v1" + n + "/statefulsets", "StatefulSet", "db"},
		{"/apis/apps/v1" + n + "/daemonsets", "DaemonSet", "agent"},
		{"/apis/apps/v1" + n + "/replicasets", "ReplicaSet", "rs"},
		{"/apis/apps/v1" + n + "/controllerrevisions", "ControllerRevision", "db-1"},
		{"/apis/batch/v1" + n + "/jobs", "Job", "migrate"},
		{"/apis/batch/v1" + n + "/cronjobs", "CronJob", "nightly"},
		{"/apis/autoscaling/v2" + n + "/horizontalpodautoscalers", "HorizontalPodAutoscaler", "web"},
		{"/apis/autoscaling/v1" + n + "/horizontalpodautoscalers", "HorizontalPodAutoscaler", "web"},
		{"/apis/policy/v1" + n + "/poddisruptionbudgets", "PodDisruptionBudget", "web"},
	}
}

// collectionOf maps a manifest's apiVersion and kind to its collection
// under ns.
func collectionOf(apiVersion, kind, ns string) string {
	plural := strings.ToLower(kind) + "s"
	prefix := "/apis/" + apiVersion
	if apiVersion == "v1" {
		prefix = "/api/v1"
	}
	if kind == "PersistentVolume" || kind == "Node" {
		return prefix + "/" + plural
	}
	return prefix + "/namespaces/" + ns + "/" + plural
}

// groupVersionOf is the group-version a collection path is served under
// ("v1", "apps/v1").
func groupVersionOf(collection string) string {
	if rest, ok := strings.CutPrefix(collection, "/api/"); ok {
		return strings.Split(rest, "/")[0]
	}
	parts := strings.Split(strings.TrimPrefix(collection, "/apis/"), "/")
	return parts[0] + "/" + parts[1]
}

// kindOf is the kind the scheme knows obj's type by.
func kindOf(obj runtime.Object) string {
	kinds, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(kinds) == 0 {
		return fmt.Sprintf("%T", obj)
	}
	return kinds[0].Kind
}

// TestWorkloadEncodings: every resource of issue 13's point 1 (created
// from YAML bodies) is read, listed and watched in protobuf, listed as a
// Table and as PartialObjectMetadata, changed with server-side apply and
// deleted, on both backends; componentstatuses (read-only) are read in
// protobuf and as a Table.
func TestWorkloadEncodings(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		ns := e.newNamespace(t)
		pv, node := "pv-"+ns, "enc-"+ns
		t.Cleanup(func() {
			_ = e.cs.CoreV1().PersistentVolumes().Delete(context.Background(), pv, metav1.DeleteOptions{})
			_ = e.cs.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{})
		})
		docs := strings.Split(mixedManifest(pv), "\n---\n")
		docs = append(docs,
			"apiVersion: v1\nkind: Node\nmetadata: {name: "+node+"}\n",
			"apiVersion: apps/v1\nkind: ControllerRevision\nmetadata: {name: db-1}\ndata: {spec: {}}\nrevision: 1\n",
			`apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  selector: {matchLabels: {app: rs}}
  template:
    metadata: {labels: {app: rs}}
    spec:
      containers: [{name: c, image: busybox}]
`)
		for _, doc := range docs {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatal(err)
			}
			if tm.Kind == "ConfigMap" || tm.Kind == "Service" {
				continue
			}
			path := collectionOf(tm.APIVersion, tm.Kind, ns)
			if r := e.raw(t, "POST", path, []byte(doc), "Content-Type", "application/yaml"); r.code != 201 {
				t.Fatalf("POST %s (YAML): %d %s", path, r.code, r.body)
			}
		}

		pbCfg := e.config()
		pbCfg.ContentType = runtime.ContentTypeProtobuf
		pbCfg.AcceptContentTypes = runtime.ContentTypeProtobuf
		pb := kubernetes.NewForConfigOrDie(pbCfg).CoreV1().RESTClient()
		decoder := scheme.Codecs.UniversalDeserializer()

		for _, p := range workloadPaths(ns, pv, node) {
			item := p.collection + "/" + p.name
			// Read and list in protobuf.
			r := e.raw(t, "GET", item, nil, "Accept", runtime.ContentTypeProtobuf)
			if r.code != 200 || r.header.Get("Content-Type") != runtime.ContentTypeProtobuf {
				t.Errorf("GET %s in protobuf: %d %s %q", item, r.code, r.header.Get("Content-Type"), r.body)
				continue
			}
			obj, gvk, err := decoder.Decode(r.body, nil, nil)
			if err != nil || gvk.Kind != p.kind || gvk.GroupVersion().String() != groupVersionOf(p.collection) {
				t.Errorf("GET %s in protobuf: decoded %v %v", item, gvk, err)
				continue
			}
			if m, err := meta.Accessor(obj); err != nil || m.GetName() != p.name {
				t.Errorf("GET %s in protobuf: got %v (%v)", item, obj, err)
			}
			r = e.raw(t, "GET", p.collection, nil, "Accept", runtime.ContentTypeProtobuf)
			list, gvk, err := decoder.Decode(r.body, nil, nil)
			if r.code != 200 || err != nil || gvk.Kind != p.kind+"List" || gvk.GroupVersion().String() != groupVersionOf(p.collection) || meta.LenList(list) < 1 {
				t.Errorf("LIST %s in protobuf: %d %v %v", p.collection, r.code, gvk, err)
			}

			// Watch in protobuf (client-go decodes the framed stream).
			wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			w, err := pb.Get().AbsPath(p.collection).Param("watch", "true").Param("resourceVersion", "0").
				Param("fieldSelector", "metadata.name="+p.name).Watch(wctx)
			if err != nil {
				t.Errorf("WATCH %s in protobuf: %v", p.collection, err)
				cancel()
				continue
			}
			select {
			case ev := <-w.ResultChan():
				m, err := meta.Accessor(ev.Object)
				if ev.Type != watch.Added || err != nil || m.GetName() != p.name || kindOf(ev.Object) != p.kind {
					t.Errorf("WATCH %s in protobuf: first event %s %T, want ADDED %s", p.collection, ev.Type, ev.Object, p.name)
				}
			case <-wctx.Done():
				t.Errorf("WATCH %s in protobuf: no event", p.collection)
			}
			w.Stop()
			cancel()

			// Tables and metadata-only lists.
			r = e.raw(t, "GET", p.collection, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
			var table metav1.Table
			if err := json.Unmarshal(r.body, &table); r.code != 200 || err != nil || table.Kind != "Table" || len(table.ColumnDefinitions) == 0 ||
				!slices.ContainsFunc(table.Rows, func(row metav1.TableRow) bool { return len(row.Cells) > 0 && row.Cells[0] == p.name }) {
				t.Errorf("LIST %s as a Table: %d %v %.300s", p.collection, r.code, err, r.body)
			}
			r = e.raw(t, "GET", item, nil, "Accept", "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io")
			var pom metav1.PartialObjectMetadata
			if err := json.Unmarshal(r.body, &pom); r.code != 200 || err != nil || pom.Kind != "PartialObjectMetadata" || pom.Name != p.name {
				t.Errorf("GET %s as PartialObjectMetadata: %d %v %.300s", item, r.code, err, r.body)
			}
		}

		// Server-side apply of a label on each object, then deletion.
		for _, p := range workloadPaths(ns, pv, node) {
			if strings.HasPrefix(p.collection, "/apis/autoscaling/v1") {
				continue // the same object as v2's
			}
			item := p.collection + "/" + p.name
			body := fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: %s, labels: {applied: \"yes\"}}\n", groupVersionOf(p.collection), p.kind, p.name)
			r := e.raw(t, "PATCH", item+"?fieldManager=audit&force=true", []byte(body), "Content-Type", "application/apply-patch+yaml")
			var got metav1.PartialObjectMetadata
			if err := json.Unmarshal(r.body, &got); r.code != 200 || err != nil || got.Labels["applied"] != "yes" ||
				!slices.ContainsFunc(got.ManagedFields, func(f metav1.ManagedFieldsEntry) bool {
					return f.Manager == "audit" && f.Operation == metav1.ManagedFieldsOperationApply
				}) {
				t.Errorf("server-side apply to %s: %d %v %.400s", item, r.code, err, r.body)
			}
			if r := e.raw(t, "DELETE", item, nil); r.code != 200 {
				t.Errorf("DELETE %s: %d %s", item, r.code, r.body)
			}
		}

		// Component statuses: read-only, protobuf and Table.
		r := e.raw(t, "GET", "/api/v1/componentstatuses/scheduler", nil, "Accept", runtime.ContentTypeProtobuf)
		if obj, gvk, err := decoder.Decode(r.body, nil, nil); r.code != 200 || err != nil || gvk.Kind != "ComponentStatus" {
			t.Errorf("GET componentstatuses/scheduler in protobuf: %d %v %v %v", r.code, gvk, obj, err)
		}
		r = e.raw(t, "GET", "/api/v1/componentstatuses", nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		if r.code != 200 || !strings.Contains(string(r.body), `"kind":"Table"`) {
			t.Errorf("LIST componentstatuses as a Table: %d %.300s", r.code, r.body)
		}
		if r := e.raw(t, "DELETE", "/api/v1/componentstatuses/scheduler", nil); r.code != 405 {
			t.Errorf("DELETE componentstatuses/scheduler: %d %s, want 405", r.code, r.body)
		}
	})
}
