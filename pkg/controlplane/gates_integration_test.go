package controlplane_test

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi/kapitest"
)

// gatedPodSpec is a pod spec using a field of each pod feature whose gate
// is off by default in kube-apiserver v1.37.2: ContainerStopSignals
// (lifecycle.stopSignal, here without spec.os, which kapi used to refuse
// with 422), H2CContainerProbe (httpGet.protocol), GRPCContainerProbeTLS
// (grpc.mode), AtomicWriteVolumeUserFields (defaultUser, items[].user,
// serviceAccountToken.user), EvictionRequestAPI (evictionResponders) and
// GenericWorkload (schedulingGroup). gated false gives the same spec
// without them.
func gatedPodSpec(gated bool) map[string]any {
	c := map[string]any{"name": "c", "image": "busybox"}
	spec := map[string]any{
		"automountServiceAccountToken": false,
		"restartPolicy":                "Always",
		"containers":                   []any{c},
	}
	if !gated {
		return spec
	}
	c["lifecycle"] = map[string]any{"stopSignal": "SIGUSR1"}
	c["livenessProbe"] = map[string]any{"httpGet": map[string]any{"port": int64(80), "protocol": "HTTP2"}}
	c["readinessProbe"] = map[string]any{"grpc": map[string]any{"port": int64(81), "mode": "TLS"}}
	c["startupProbe"] = map[string]any{"exec": map[string]any{"command": []any{"true"}}}
	spec["initContainers"] = []any{map[string]any{"name": "i", "image": "busybox", "restartPolicy": "Always",
		"lifecycle": map[string]any{"stopSignal": "SIGTERM", "preStop": map[string]any{"sleep": map[string]any{"seconds": int64(1)}}}}}
	spec["volumes"] = []any{
		map[string]any{"name": "s", "secret": map[string]any{"secretName": "x", "defaultUser": int64(1000),
			"items": []any{map[string]any{"key": "k", "path": "p", "user": int64(1001)}}}},
		map[string]any{"name": "pr", "projected": map[string]any{"defaultUser": int64(5),
			"sources": []any{map[string]any{"serviceAccountToken": map[string]any{"path": "t", "user": int64(7)}}}}},
	}
	spec["evictionResponders"] = []any{map[string]any{"name": "example.com/responder"}}
	spec["schedulingGroup"] = map[string]any{"podGroupName": "g"}
	return spec
}

// gatedKind is a resource holding a pod spec: how to make one around a
// spec and where its spec is.
type gatedKind struct {
	gvr      schema.GroupVersionResource
	kind     string
	specPath []string
	wrap     func(spec map[string]any) map[string]any
}

func gatedKinds() []gatedKind {
	labels := map[string]any{"app": "gates"}
	template := func(spec map[string]any) map[string]any {
		return map[string]any{"metadata": map[string]any{"labels": labels}, "spec": spec}
	}
	jobTemplate := func(spec map[string]any) map[string]any {
		spec["restartPolicy"] = "Never"
		return template(spec)
	}
	sel := map[string]any{"matchLabels": labels}
	apps := func(resource, kind string, extra map[string]any) gatedKind {
		return gatedKind{
			gvr: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: resource}, kind: kind,
			specPath: []string{"spec", "template", "spec"},
			wrap: func(spec map[string]any) map[string]any {
				s := map[string]any{"selector": sel, "template": template(spec)}
				for k, v := range extra {
					s[k] = v
				}
				return map[string]any{"spec": s}
			},
		}
	}
	return []gatedKind{
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, kind: "Pod", specPath: []string{"spec"},
			wrap: func(spec map[string]any) map[string]any { return map[string]any{"spec": spec} }},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "podtemplates"}, kind: "PodTemplate", specPath: []string{"template", "spec"},
			wrap: func(spec map[string]any) map[string]any { return map[string]any{"template": template(spec)} }},
		{gvr: schema.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}, kind: "ReplicationController", specPath: []string{"spec", "template", "spec"},
			wrap: func(spec map[string]any) map[string]any {
				return map[string]any{"spec": map[string]any{"selector": labels, "template": template(spec)}}
			}},
		apps("deployments", "Deployment", nil),
		apps("replicasets", "ReplicaSet", nil),
		apps("daemonsets", "DaemonSet", nil),
		apps("statefulsets", "StatefulSet", map[string]any{"serviceName": "s"}),
		{gvr: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}, kind: "Job", specPath: []string{"spec", "template", "spec"},
			wrap: func(spec map[string]any) map[string]any {
				return map[string]any{"spec": map[string]any{"template": jobTemplate(spec)}}
			}},
		{gvr: schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}, kind: "CronJob", specPath: []string{"spec", "jobTemplate", "spec", "template", "spec"},
			wrap: func(spec map[string]any) map[string]any {
				return map[string]any{"spec": map[string]any{"schedule": "* * * * *",
					"jobTemplate": map[string]any{"spec": map[string]any{"template": jobTemplate(spec)}}}}
			}},
	}
}

func (k gatedKind) object(name string, gated bool) *unstructured.Unstructured {
	o := k.wrap(gatedPodSpec(gated))
	apiVersion := k.gvr.Version
	if k.gvr.Group != "" {
		apiVersion = k.gvr.Group + "/" + apiVersion
	}
	o["apiVersion"], o["kind"] = apiVersion, k.kind
	o["metadata"] = map[string]any{"name": name, "namespace": "default"}
	return &unstructured.Unstructured{Object: o}
}

// gatedFieldsLeft lists the fields of the off-by-default features that
// the pod spec of o still has.
func gatedFieldsLeft(t *testing.T, o *unstructured.Unstructured, specPath []string) []string {
	t.Helper()
	spec, found, err := unstructured.NestedMap(o.Object, specPath...)
	if err != nil || !found {
		t.Fatalf("%s: no pod spec at %v: %v", o.GetName(), specPath, err)
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, f := range []string{`"stopSignal"`, `"protocol":"HTTP2"`, `"mode":"TLS"`, `"defaultUser"`, `"user"`, `"evictionResponders"`, `"schedulingGroup"`} {
		if strings.Contains(string(raw), f) {
			left = append(left, f)
		}
	}
	// The sidecar's preStop stays, without the stop signal (upstream
	// drops the lifecycle only when it is left empty).
	if ics, _, _ := unstructured.NestedSlice(spec, "initContainers"); len(ics) == 1 {
		if _, ok, _ := unstructured.NestedMap(ics[0].(map[string]any), "lifecycle", "preStop"); !ok {
			left = append(left, "initContainers[0].lifecycle.preStop is gone")
		}
	}
	if cs, _, _ := unstructured.NestedSlice(spec, "containers"); len(cs) == 1 {
		if _, ok := cs[0].(map[string]any)["lifecycle"]; ok {
			left = append(left, "containers[0].lifecycle left empty")
		}
	}
	return left
}

// TestOffByDefaultPodFieldsAreDropped: kube-apiserver v1.37.2 with its
// default gates answers a create of a pod, or of any object holding a pod
// template, that uses the fields of the off-by-default features with 201
// and drops them (checked with `kubectl create --dry-run=server -o json`
// for each kind), and drops them when an update adds them to an object
// that did not use them (checked with kubectl replace and a merge patch of
// a Deployment).
func TestOffByDefaultPodFieldsAreDropped(t *testing.T) {
	srv := kapitest.Start(t)
	dc, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, k := range gatedKinds() {
		t.Run(k.kind, func(t *testing.T) {
			client := dc.Resource(k.gvr).Namespace("default")
			name := strings.ToLower(k.kind) + "-create"
			created, err := client.Create(ctx, k.object(name, true), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: reference answers 201, kapi: %v", err)
			}
			if left := gatedFieldsLeft(t, created, k.specPath); len(left) != 0 {
				t.Errorf("create answer keeps %v; the reference drops them", left)
			}
			got, err := client.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if left := gatedFieldsLeft(t, got, k.specPath); len(left) != 0 {
				t.Errorf("stored object keeps %v; the reference drops them", left)
			}
			if k.kind == "Pod" || k.kind == "Job" {
				return // a pod's spec and a job's template take no such update
			}

			name = strings.ToLower(k.kind) + "-update"
			stored, err := client.Create(ctx, k.object(name, false), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			update := k.object(name, true)
			update.SetResourceVersion(stored.GetResourceVersion())
			updated, err := client.Update(ctx, update, metav1.UpdateOptions{})
			if err != nil {
				t.Fatalf("update: reference answers 200, kapi: %v", err)
			}
			if left := gatedFieldsLeft(t, updated, k.specPath); len(left) != 0 {
				t.Errorf("update answer keeps %v; the reference drops them", left)
			}
			patch, err := json.Marshal(k.wrap(gatedPodSpec(true)))
			if err != nil {
				t.Fatal(err)
			}
			patched, err := client.Patch(ctx, name, "application/merge-patch+json", patch, metav1.PatchOptions{})
			if err != nil {
				t.Fatalf("merge patch: reference answers 200, kapi: %v", err)
			}
			if left := gatedFieldsLeft(t, patched, k.specPath); len(left) != 0 {
				t.Errorf("patch answer keeps %v; the reference drops them", left)
			}
		})
	}
}

// TestCrossNamespaceDataSourceRefIsDropped: CrossNamespaceVolumeDataSource
// is alpha and off by default in v1.37.2, whose PVC strategy drops a
// dataSourceRef naming a namespace unless the stored claim has a
// dataSourceRef; a dataSource sent along is then mirrored into
// dataSourceRef. Answers of the reference, checked with kubectl create
// --dry-run=server and kubectl replace.
func TestCrossNamespaceDataSourceRefIsDropped(t *testing.T) {
	srv := kapitest.Start(t)
	dc, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	client := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}).Namespace("default")
	ctx := t.Context()
	snapshot := map[string]any{"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s"}
	crossNamespace := map[string]any{"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "s", "namespace": "other"}
	claim := func(name string, sources map[string]any) *unstructured.Unstructured {
		spec := map[string]any{
			"accessModes": []any{"ReadWriteOnce"},
			"resources":   map[string]any{"requests": map[string]any{"storage": "1Gi"}},
		}
		for k, v := range sources {
			spec[k] = v
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "PersistentVolumeClaim",
			"metadata": map[string]any{"name": name, "namespace": "default"},
			"spec":     spec,
		}}
	}
	sources := func(o *unstructured.Unstructured) (ds, ref any) {
		spec, _, _ := unstructured.NestedMap(o.Object, "spec")
		return spec["dataSource"], spec["dataSourceRef"]
	}
	for _, tc := range []struct {
		name            string
		sent            map[string]any
		wantDS, wantRef any
	}{
		{"ref with a namespace alone", map[string]any{"dataSourceRef": crossNamespace}, nil, nil},
		{"ref with a namespace and a dataSource", map[string]any{"dataSource": snapshot, "dataSourceRef": crossNamespace}, snapshot, snapshot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ToLower(strings.ReplaceAll(tc.name, " ", "-"))
			got, err := client.Create(ctx, claim(name, tc.sent), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: reference answers 201, kapi: %v", err)
			}
			ds, ref := sources(got)
			if !equality.Semantic.DeepEqual(ds, tc.wantDS) || !equality.Semantic.DeepEqual(ref, tc.wantRef) {
				t.Errorf("dataSource, dataSourceRef = %v, %v; the reference's: %v, %v", ds, ref, tc.wantDS, tc.wantRef)
			}
		})
	}
	t.Run("update adding a ref with a namespace", func(t *testing.T) {
		stored, err := client.Create(ctx, claim("plain", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		update := claim("plain", map[string]any{"dataSourceRef": crossNamespace})
		update.SetResourceVersion(stored.GetResourceVersion())
		got, err := client.Update(ctx, update, metav1.UpdateOptions{})
		if err != nil {
			t.Fatalf("update: reference answers 200, kapi: %v", err)
		}
		if ds, ref := sources(got); ds != nil || ref != nil {
			t.Errorf("dataSource, dataSourceRef = %v, %v; the reference drops the ref", ds, ref)
		}
	})
}

// TestNodePodPreemptionPolicyIsDropped: spec.podPreemptionPolicy
// (InPlacePodVerticalScalingSchedulerPreemption, alpha, off by default in
// v1.37.2) is dropped from a new node and from an update of a node that
// has none, as the reference answers (kubectl create --dry-run=server,
// kubectl replace).
func TestNodePodPreemptionPolicyIsDropped(t *testing.T) {
	srv := kapitest.Start(t)
	dc, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	client := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "nodes"})
	ctx := t.Context()
	node := func(name string, policy bool) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name}}}
		if policy {
			o.Object["spec"] = map[string]any{"podPreemptionPolicy": map[string]any{"disableResizePreemption": []any{"example.com/a"}}}
		}
		return o
	}
	created, err := client.Create(ctx, node("gates-create", true), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: reference answers 201, kapi: %v", err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(created.Object, "spec", "podPreemptionPolicy"); found {
		t.Errorf("create kept spec.podPreemptionPolicy; the reference drops it")
	}
	stored, err := client.Create(ctx, node("gates-update", false), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	update := node("gates-update", true)
	update.SetResourceVersion(stored.GetResourceVersion())
	updated, err := client.Update(ctx, update, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: reference answers 200, kapi: %v", err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(updated.Object, "spec", "podPreemptionPolicy"); found {
		t.Errorf("update kept spec.podPreemptionPolicy; the reference drops it")
	}
}

// TestResourceSliceAlphaFieldsAreDropped: the fields of five alpha DRA
// gates (off by default in v1.37.2) are dropped from a new slice, as the
// reference answers (kubectl create --dry-run=server -o json); a device
// attribute holding only a list value is then empty, which the reference
// refuses with 422 in the words of its declarative union validation (as
// one with two values).
func TestResourceSliceAlphaFieldsAreDropped(t *testing.T) {
	srv := kapitest.Start(t)
	dc, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	client := dc.Resource(schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceslices"})
	ctx := t.Context()
	slice := func(name string, attrs map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"driver": "example.com", "allNodes": true,
				"pool":                   map[string]any{"name": name, "generation": int64(1), "resourceSliceCount": int64(1)},
				"partitionTypeAttribute": "example.com/type",
				"skipNodeOperations":     []any{"NodePrepareResources"},
				"devices": []any{map[string]any{
					"name":       "d",
					"attributes": attrs,
					"consumesCounters": []any{map[string]any{"counterSet": "cs",
						"counters":            map[string]any{"mem": map[string]any{"value": "1"}},
						"compatibilityGroups": []any{"g"}}},
					"nodeAllocatableResources": map[string]any{"cpu": map[string]any{}},
				}},
			},
		}}
	}
	got, err := client.Create(ctx, slice("gates", map[string]any{"a": map[string]any{"string": "x"}}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: reference answers 201, kapi: %v", err)
	}
	want := map[string]any{
		"driver": "example.com", "allNodes": true,
		"pool": map[string]any{"name": "gates", "generation": int64(1), "resourceSliceCount": int64(1)},
		"devices": []any{map[string]any{
			"name":       "d",
			"attributes": map[string]any{"a": map[string]any{"string": "x"}},
			"consumesCounters": []any{map[string]any{"counterSet": "cs",
				"counters": map[string]any{"mem": map[string]any{"value": "1"}}}},
		}},
	}
	if spec, _, _ := unstructured.NestedMap(got.Object, "spec"); !equality.Semantic.DeepEqual(spec, want) {
		t.Errorf("spec = %v\nthe reference's: %v", spec, want)
	}
	_, err = client.Create(ctx, slice("lists", map[string]any{"l": map[string]any{"ints": []any{int64(1), int64(2)}}}), metav1.CreateOptions{})
	const wantErr = "spec.devices[0].attributes[l]: Invalid value: \"\": must specify one of: `int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`"
	if err == nil || !strings.Contains(err.Error(), wantErr) {
		t.Errorf("create with a list attribute: %v; the reference answers 422 %s", err, wantErr)
	}
	_, err = client.Create(ctx, slice("two", map[string]any{"a": map[string]any{"string": "x", "int": int64(1)}}), metav1.CreateOptions{})
	const wantTwo = "spec.devices[0].attributes[a]: Invalid value: \"{int, string}\": must specify exactly one of: `int`, `bool`, `string`, `version`, `ints`, `bools`, `strings`, `versions`"
	if err == nil || !strings.Contains(err.Error(), wantTwo) {
		t.Errorf("create with two values: %v; the reference answers 422 %s", err, wantTwo)
	}
}

// TestDerivedAttributesAreDropped: the device requests' derivedAttributes
// (DRADerivedAttributes, alpha, off by default in v1.37.2) are dropped
// from new claims and claim templates, as the reference answers (kubectl
// create --dry-run=server -o json).
func TestDerivedAttributesAreDropped(t *testing.T) {
	srv := kapitest.Start(t)
	dc, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	derived := []any{map[string]any{"name": "example.com/numa", "expression": "1"}}
	for _, tc := range []struct {
		resource, kind string
		spec           map[string]any
		requestsPath   []string
		want           []any
	}{
		{"resourceclaims", "ResourceClaim",
			map[string]any{"devices": map[string]any{"requests": []any{map[string]any{"name": "r",
				"exactly": map[string]any{"deviceClassName": "c", "derivedAttributes": derived}}}}},
			[]string{"spec", "devices", "requests"},
			[]any{map[string]any{"name": "r", "exactly": map[string]any{"deviceClassName": "c", "allocationMode": "ExactCount", "count": int64(1)}}}},
		{"resourceclaimtemplates", "ResourceClaimTemplate",
			map[string]any{"spec": map[string]any{"devices": map[string]any{"requests": []any{map[string]any{"name": "r",
				"firstAvailable": []any{map[string]any{"name": "s", "deviceClassName": "c", "derivedAttributes": derived}}}}}}},
			[]string{"spec", "spec", "devices", "requests"},
			[]any{map[string]any{"name": "r", "firstAvailable": []any{map[string]any{"name": "s", "deviceClassName": "c", "allocationMode": "ExactCount", "count": int64(1)}}}}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			client := dc.Resource(schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: tc.resource}).Namespace("default")
			got, err := client.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "resource.k8s.io/v1", "kind": tc.kind,
				"metadata": map[string]any{"name": "gates", "namespace": "default"},
				"spec":     tc.spec,
			}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: reference answers 201, kapi: %v", err)
			}
			if requests, _, _ := unstructured.NestedSlice(got.Object, tc.requestsPath...); !equality.Semantic.DeepEqual(requests, tc.want) {
				t.Errorf("requests = %v\nthe reference's: %v", requests, tc.want)
			}
		})
	}
}
