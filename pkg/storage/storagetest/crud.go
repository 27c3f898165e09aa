package storagetest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/storage"
)

func crudCases() []testCase {
	return []testCase{
		{"Create", testCreate},
		{"CreateSharesRevision", testCreateSharesRevision},
		{"Get", testGet},
		{"GetReturnsCopies", testGetReturnsCopies},
		{"Update", testUpdate},
		{"UpdatePreconditions", testUpdatePreconditions},
		{"UpdateIgnoreNotFound", testUpdateIgnoreNotFound},
		{"UpdateUnchangedWritesNothing", testUpdateUnchanged},
		{"UpdateTryUpdateError", testUpdateTryUpdateError},
		{"UpdateCachedExistingObject", testUpdateCached},
		{"UpdateConcurrentCounter", testUpdateConcurrent},
		{"Delete", testDelete},
		{"DeleteMissing", testDeleteMissing},
		{"DeletePreconditions", testDeletePreconditions},
		{"DeleteValidation", testDeleteValidation},
		{"DeleteCachedExistingObject", testDeleteCached},
		{"LargeObjects", testLargeObjects},
		{"CancelledContext", testCancelledContext},
	}
}

func testCreate(t *testing.T, e *env) {
	before := e.currentRevision()
	out := e.create("ns", "a", map[string]string{"app": "x"}, "node1")
	rv := rvOf(t, out)
	if rv <= before {
		t.Fatalf("created resourceVersion %d, want > %d (revision before)", rv, before)
	}
	if got := e.currentRevision(); got != rv {
		t.Fatalf("current revision %d after create, want %d", got, rv)
	}
	if out.Name != "a" || out.Labels["app"] != "x" || out.Spec.NodeName != "node1" {
		t.Fatalf("create out = %s/%s labels %v node %q, want the stored pod", out.Namespace, out.Name, out.Labels, out.Spec.NodeName)
	}
	got, err := e.get("ns", "a")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if rvOf(t, got) != rv || got.UID != out.UID {
		t.Fatalf("get: rv %s uid %s, want %d %s", got.ResourceVersion, got.UID, rv, out.UID)
	}

	err = e.pods.Create(e.ctx, podKey("ns", "a"), newPod("ns", "a", nil, ""), &corev1.Pod{})
	wantCode(t, "create existing", err, storage.ErrCodeKeyExists)

	withRV := newPod("ns", "b", nil, "")
	withRV.ResourceVersion = "5"
	if err := e.pods.Create(e.ctx, podKey("ns", "b"), withRV, &corev1.Pod{}); err == nil {
		t.Fatalf("create with resourceVersion set: got nil error, want an error")
	}
	if _, err := e.get("ns", "b"); !storage.IsNotFound(err) {
		t.Fatalf("get after rejected create: got %v, want not found", err)
	}
	// out may be nil.
	if err := e.pods.Create(e.ctx, podKey("ns", "c"), newPod("ns", "c", nil, ""), nil); err != nil {
		t.Fatalf("create with nil out: %v", err)
	}
}

func testCreateSharesRevision(t *testing.T, e *env) {
	pod := e.create("ns", "a", nil, "")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Data: map[string]string{"k": "v"}}
	out := &corev1.ConfigMap{}
	if err := e.cms.Create(e.ctx, "/configmaps/ns/a", cm, out); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	if p, c := rvOf(t, pod), rvOf(t, out); c <= p {
		t.Fatalf("configmap created after pod has resourceVersion %d, want > %d (one revision per backend)", c, p)
	}
	rev, err := e.cms.CurrentRevision(e.ctx)
	if err != nil {
		t.Fatalf("current revision: %v", err)
	}
	if podRev := e.currentRevision(); rev != podRev || rev != rvOf(t, out) {
		t.Fatalf("current revision: configmaps %d, pods %d, want both %d", rev, podRev, rvOf(t, out))
	}
	// The same key path under another resource is another object.
	if _, err := e.get("ns", "b"); !storage.IsNotFound(err) {
		t.Fatalf("get pod ns/b: got %v, want not found", err)
	}
}

func testGet(t *testing.T, e *env) {
	created := e.create("ns", "a", nil, "")
	rv := rvOf(t, created)

	tests := []struct {
		name     string
		key      string
		opts     storage.GetOptions
		wantCode int // 0: success
		wantName string
		// eventually: the answer may be stale for a while (a cache serves
		// "0" with any state it has): retry until waitTimeout.
		eventually bool
	}{
		{name: "latest", key: podKey("ns", "a"), wantName: "a"},
		{name: "rv 0", key: podKey("ns", "a"), opts: storage.GetOptions{ResourceVersion: "0"}, wantName: "a", eventually: true},
		{name: "rv current", key: podKey("ns", "a"), opts: storage.GetOptions{ResourceVersion: rvString(rv)}, wantName: "a"},
		{name: "rv older", key: podKey("ns", "a"), opts: storage.GetOptions{ResourceVersion: rvString(rv - 1)}, wantName: "a"},
		{name: "rv too large", key: podKey("ns", "a"), opts: storage.GetOptions{ResourceVersion: rvString(rv + 1000)}, wantCode: storage.ErrCodeTooLargeResourceVersion},
		{name: "missing", key: podKey("ns", "nope"), wantCode: storage.ErrCodeKeyNotFound},
		{name: "missing ignored", key: podKey("ns", "nope"), opts: storage.GetOptions{IgnoreNotFound: true}, wantName: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stale"}}
			err := e.pods.Get(e.ctx, tt.key, tt.opts, out)
			for deadline := time.Now().Add(waitTimeout); tt.eventually && storage.IsNotFound(err) && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
				out = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stale"}}
				err = e.pods.Get(e.ctx, tt.key, tt.opts, out)
			}
			if tt.wantCode != 0 {
				wantCode(t, "get", err, tt.wantCode)
				return
			}
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if out.Name != tt.wantName {
				t.Fatalf("got name %q, want %q", out.Name, tt.wantName)
			}
			if tt.wantName != "" && rvOf(t, out) != rv {
				t.Fatalf("got resourceVersion %s, want %d", out.ResourceVersion, rv)
			}
		})
	}
}

func testGetReturnsCopies(t *testing.T, e *env) {
	in := newPod("ns", "a", map[string]string{"app": "x"}, "")
	out := &corev1.Pod{}
	if err := e.pods.Create(e.ctx, podKey("ns", "a"), in, out); err != nil {
		t.Fatalf("create: %v", err)
	}
	in.Labels["app"] = "changed-input"
	out.Labels["app"] = "changed-output"
	first, err := e.get("ns", "a")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	first.Labels["app"] = "changed-get"
	second, err := e.get("ns", "a")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got := second.Labels["app"]; got != "x" {
		t.Fatalf("stored label app=%q after callers changed their objects, want %q", got, "x")
	}
}

func testUpdate(t *testing.T, e *env) {
	created := e.create("ns", "a", map[string]string{"app": "x"}, "")
	var seenRV string
	out := &corev1.Pod{}
	err := e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "a"), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		p := in.(*corev1.Pod)
		seenRV = p.ResourceVersion
		p.Labels["app"] = "y"
		return p, nil
	}, nil)
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if seenRV != created.ResourceVersion {
		t.Fatalf("tryUpdate got resourceVersion %q, want the current %q", seenRV, created.ResourceVersion)
	}
	if rvOf(t, out) <= rvOf(t, created) || out.Labels["app"] != "y" {
		t.Fatalf("update out: rv %s app=%s, want rv > %s and app=y", out.ResourceVersion, out.Labels["app"], created.ResourceVersion)
	}
	if got := e.currentRevision(); got != rvOf(t, out) {
		t.Fatalf("current revision %d, want the update's %s", got, out.ResourceVersion)
	}
	got, err := e.get("ns", "a")
	if err != nil || got.Labels["app"] != "y" || got.ResourceVersion != out.ResourceVersion {
		t.Fatalf("get after update: %v app=%q rv %s, want app=y rv %s", err, got.Labels["app"], got.ResourceVersion, out.ResourceVersion)
	}

	err = e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "missing"), &corev1.Pod{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
		t.Errorf("tryUpdate called for a missing key without ignoreNotFound")
		return in, nil
	}, nil)
	wantCode(t, "update missing", err, storage.ErrCodeKeyNotFound)
}

func testUpdatePreconditions(t *testing.T, e *env) {
	e.create("ns", "a", nil, "")
	otherUID := types.UID("other")
	tests := []struct {
		name         string
		pre          func(cur *corev1.Pod) *storage.Preconditions
		wantConflict bool
	}{
		{"none", func(*corev1.Pod) *storage.Preconditions { return nil }, false},
		{"uid match", func(cur *corev1.Pod) *storage.Preconditions { return &storage.Preconditions{UID: &cur.UID} }, false},
		{"uid mismatch", func(*corev1.Pod) *storage.Preconditions { return &storage.Preconditions{UID: &otherUID} }, true},
		{"rv match", func(cur *corev1.Pod) *storage.Preconditions {
			return &storage.Preconditions{ResourceVersion: &cur.ResourceVersion}
		}, false},
		{"rv mismatch", func(cur *corev1.Pod) *storage.Preconditions {
			old := rvString(rvOf(t, cur) - 1)
			return &storage.Preconditions{ResourceVersion: &old}
		}, true},
		{"uid match rv mismatch", func(cur *corev1.Pod) *storage.Preconditions {
			other := "1" + cur.ResourceVersion
			return &storage.Preconditions{UID: &cur.UID, ResourceVersion: &other}
		}, true},
		{"uid and rv match", func(cur *corev1.Pod) *storage.Preconditions {
			return &storage.Preconditions{UID: &cur.UID, ResourceVersion: &cur.ResourceVersion}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := e.get("ns", "a")
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			calls := 0
			out := &corev1.Pod{}
			err = e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "a"), out, false, tt.pre(before.DeepCopy()), func(in runtime.Object) (runtime.Object, error) {
				calls++
				p := in.(*corev1.Pod)
				p.Annotations = map[string]string{"updated-from": p.ResourceVersion}
				return p, nil
			}, nil)
			after, gerr := e.get("ns", "a")
			if gerr != nil {
				t.Fatalf("get: %v", gerr)
			}
			if tt.wantConflict {
				wantCode(t, "update", err, storage.ErrCodeResourceVersionConflicts)
				if calls != 0 || after.ResourceVersion != before.ResourceVersion {
					t.Fatalf("failed precondition: tryUpdate called %d times, rv %s -> %s; want no call, no write", calls, before.ResourceVersion, after.ResourceVersion)
				}
				return
			}
			if err != nil {
				t.Fatalf("update: %v", err)
			}
			if after.ResourceVersion == before.ResourceVersion || out.ResourceVersion != after.ResourceVersion {
				t.Fatalf("rv before %s, out %s, after %s: want a write", before.ResourceVersion, out.ResourceVersion, after.ResourceVersion)
			}
		})
	}
}

func testUpdateIgnoreNotFound(t *testing.T, e *env) {
	out := &corev1.Pod{}
	var gotInput string
	err := e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "new"), out, true, nil, func(in runtime.Object) (runtime.Object, error) {
		p, ok := in.(*corev1.Pod)
		if !ok {
			t.Errorf("tryUpdate got %T, want *corev1.Pod", in)
			return in, nil
		}
		gotInput = p.Name + "|" + p.ResourceVersion
		return newPod("ns", "new", map[string]string{"made": "by-update"}, ""), nil
	}, nil)
	if err != nil {
		t.Fatalf("update missing with ignoreNotFound: %v", err)
	}
	if gotInput != "|" {
		t.Fatalf("tryUpdate input name|rv = %q, want a zero object", gotInput)
	}
	got, err := e.get("ns", "new")
	if err != nil || got.Labels["made"] != "by-update" || got.ResourceVersion != out.ResourceVersion {
		t.Fatalf("get: %v labels %v rv %s, want the object written by the update (rv %s)", err, got.Labels, got.ResourceVersion, out.ResourceVersion)
	}
}

func testUpdateUnchanged(t *testing.T, e *env) {
	created := e.create("ns", "a", map[string]string{"app": "x"}, "")
	e.create("ns", "b", nil, "") // the current revision is not the object's
	rev := e.currentRevision()
	out := &corev1.Pod{}
	err := e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "a"), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		return in, nil
	}, nil)
	if err != nil {
		t.Fatalf("no-op update: %v", err)
	}
	if out.ResourceVersion != created.ResourceVersion || out.Labels["app"] != "x" {
		t.Fatalf("no-op update out rv %s app=%s, want rv %s app=x", out.ResourceVersion, out.Labels["app"], created.ResourceVersion)
	}
	if got := e.currentRevision(); got != rev {
		t.Fatalf("current revision %d after a no-op update, want %d (nothing written)", got, rev)
	}
	// The same through a cached object.
	err = e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "a"), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		return in, nil
	}, created.DeepCopy())
	if err != nil {
		t.Fatalf("no-op update with cached object: %v", err)
	}
	if got := e.currentRevision(); got != rev || out.ResourceVersion != created.ResourceVersion {
		t.Fatalf("after cached no-op: revision %d, out rv %s; want %d and %s", got, out.ResourceVersion, rev, created.ResourceVersion)
	}
}

func testUpdateTryUpdateError(t *testing.T, e *env) {
	e.create("ns", "a", nil, "")
	rev := e.currentRevision()
	errBoom := errors.New("boom")
	err := e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "a"), &corev1.Pod{}, false, nil, func(runtime.Object) (runtime.Object, error) {
		return nil, errBoom
	}, nil)
	if !errors.Is(err, errBoom) {
		t.Fatalf("got %v, want the tryUpdate error", err)
	}
	if got := e.currentRevision(); got != rev {
		t.Fatalf("current revision %d, want %d (nothing written)", got, rev)
	}
}

func testUpdateCached(t *testing.T, e *env) {
	stale := e.create("ns", "a", map[string]string{"n": "0"}, "")
	current := e.update("ns", "a", func(p *corev1.Pod) { p.Labels["n"] = "1" })

	// A stale guess is retried against the current object.
	var inputs []string
	rv := current.ResourceVersion
	out := &corev1.Pod{}
	err := e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "a"), out, false, &storage.Preconditions{ResourceVersion: &rv},
		func(in runtime.Object) (runtime.Object, error) {
			p := in.(*corev1.Pod)
			inputs = append(inputs, p.Labels["n"])
			p.Labels["n"] += "+"
			return p, nil
		}, stale.DeepCopy())
	if err != nil {
		t.Fatalf("update with stale cached object: %v", err)
	}
	if out.Labels["n"] != "1+" {
		t.Fatalf("result n=%q (tryUpdate inputs %v), want %q: the update must apply to the current object", out.Labels["n"], inputs, "1+")
	}
	// A current guess works directly.
	out2 := &corev1.Pod{}
	err = e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "a"), out2, false, nil, func(in runtime.Object) (runtime.Object, error) {
		p := in.(*corev1.Pod)
		p.Labels["n"] += "+"
		return p, nil
	}, out.DeepCopy())
	if err != nil || out2.Labels["n"] != "1++" {
		t.Fatalf("update with current cached object: %v n=%q, want n=1++", err, out2.Labels["n"])
	}
}

func testUpdateConcurrent(t *testing.T, e *env) {
	const workers, perWorker = 20, 10
	e.create("ns", "counter", nil, "")
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for range perWorker {
				err := e.pods.GuaranteedUpdate(e.ctx, podKey("ns", "counter"), &corev1.Pod{}, false, nil,
					func(in runtime.Object) (runtime.Object, error) {
						p := in.(*corev1.Pod)
						n, _ := strconv.Atoi(p.Annotations["count"])
						if p.Annotations == nil {
							p.Annotations = map[string]string{}
						}
						p.Annotations["count"] = strconv.Itoa(n + 1)
						return p, nil
					}, nil)
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent update: %v", err)
	}
	got, err := e.get("ns", "counter")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if want := strconv.Itoa(workers * perWorker); got.Annotations["count"] != want {
		t.Fatalf("count = %s, want %s", got.Annotations["count"], want)
	}
}

func testDelete(t *testing.T, e *env) {
	created := e.create("ns", "a", map[string]string{"app": "x"}, "")
	out := e.delete("ns", "a")
	rev := e.currentRevision()
	if out.Name != "a" || out.Labels["app"] != "x" || out.UID != created.UID {
		t.Fatalf("deleted object %s labels %v uid %s, want the stored object", out.Name, out.Labels, out.UID)
	}
	if got := rvOf(t, out); got != rev || got <= rvOf(t, created) {
		t.Fatalf("deleted object resourceVersion %d, want the delete's revision %d", got, rev)
	}
	if _, err := e.get("ns", "a"); !storage.IsNotFound(err) {
		t.Fatalf("get after delete: got %v, want not found", err)
	}
	err := e.pods.Delete(e.ctx, podKey("ns", "a"), &corev1.Pod{}, nil, noValidation, nil)
	wantCode(t, "second delete", err, storage.ErrCodeKeyNotFound)
	// The key can be created again.
	again := e.create("ns", "a", nil, "")
	if rvOf(t, again) <= rev {
		t.Fatalf("recreated rv %s, want > %d", again.ResourceVersion, rev)
	}
}

func testDeleteMissing(t *testing.T, e *env) {
	rev := e.currentRevision()
	err := e.pods.Delete(e.ctx, podKey("ns", "never"), &corev1.Pod{}, nil, noValidation, nil)
	wantCode(t, "delete missing", err, storage.ErrCodeKeyNotFound)
	uid := types.UID("x")
	err = e.pods.Delete(e.ctx, podKey("ns", "never"), &corev1.Pod{}, &storage.Preconditions{UID: &uid}, noValidation, nil)
	wantCode(t, "delete missing with preconditions", err, storage.ErrCodeKeyNotFound)
	if got := e.currentRevision(); got != rev {
		t.Fatalf("current revision %d, want %d (nothing written)", got, rev)
	}
}

func testDeletePreconditions(t *testing.T, e *env) {
	created := e.create("ns", "a", nil, "")
	uid, otherUID := created.UID, types.UID("other")
	rv, otherRV := created.ResourceVersion, "1"+created.ResourceVersion
	tests := []struct {
		name         string
		pre          *storage.Preconditions
		wantConflict bool
	}{
		{"uid mismatch", &storage.Preconditions{UID: &otherUID}, true},
		{"rv mismatch", &storage.Preconditions{ResourceVersion: &otherRV}, true},
		{"uid match rv mismatch", &storage.Preconditions{UID: &uid, ResourceVersion: &otherRV}, true},
		{"uid and rv match", &storage.Preconditions{UID: &uid, ResourceVersion: &rv}, false}, // last: deletes
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := e.pods.Delete(e.ctx, podKey("ns", "a"), &corev1.Pod{}, tt.pre, noValidation, nil)
			_, gerr := e.get("ns", "a")
			if tt.wantConflict {
				wantCode(t, "delete", err, storage.ErrCodeResourceVersionConflicts)
				if gerr != nil {
					t.Fatalf("get after failed delete: %v, want the object still there", gerr)
				}
				return
			}
			if err != nil {
				t.Fatalf("delete: %v", err)
			}
			if !storage.IsNotFound(gerr) {
				t.Fatalf("get after delete: got %v, want not found", gerr)
			}
		})
	}
}

func testDeleteValidation(t *testing.T, e *env) {
	e.create("ns", "a", map[string]string{"protected": "true"}, "")
	errProtected := errors.New("protected")
	var seen string
	validate := func(_ context.Context, obj runtime.Object) error {
		p := obj.(*corev1.Pod)
		seen = p.Name + "|" + p.ResourceVersion
		if p.Labels["protected"] == "true" {
			return errProtected
		}
		return nil
	}
	err := e.pods.Delete(e.ctx, podKey("ns", "a"), &corev1.Pod{}, nil, validate, nil)
	if !errors.Is(err, errProtected) {
		t.Fatalf("delete: got %v, want the validation error", err)
	}
	cur, gerr := e.get("ns", "a")
	if gerr != nil {
		t.Fatalf("get after rejected delete: %v", gerr)
	}
	if want := "a|" + cur.ResourceVersion; seen != want {
		t.Fatalf("validateDeletion saw %q, want %q (the current object)", seen, want)
	}
	e.update("ns", "a", func(p *corev1.Pod) { p.Labels["protected"] = "false" })
	if err := e.pods.Delete(e.ctx, podKey("ns", "a"), &corev1.Pod{}, nil, validate, nil); err != nil {
		t.Fatalf("delete after unprotecting: %v", err)
	}
}

func testDeleteCached(t *testing.T, e *env) {
	stale := e.create("ns", "a", map[string]string{"n": "0"}, "")
	current := e.update("ns", "a", func(p *corev1.Pod) { p.Labels["n"] = "1" })
	rv := current.ResourceVersion
	out := &corev1.Pod{}
	err := e.pods.Delete(e.ctx, podKey("ns", "a"), out, &storage.Preconditions{ResourceVersion: &rv}, noValidation, stale.DeepCopy())
	if err != nil {
		t.Fatalf("delete with stale cached object and current rv precondition: %v", err)
	}
	if out.Labels["n"] != "1" {
		t.Fatalf("deleted object n=%q, want the current object (n=1)", out.Labels["n"])
	}
	if _, err := e.get("ns", "a"); !storage.IsNotFound(err) {
		t.Fatalf("get after delete: got %v, want not found", err)
	}
}

// configMapOfSize returns a configmap whose encoding with codec is exactly
// size bytes.
func configMapOfSize(t *testing.T, codec runtime.Codec, name string, size int) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string]string{"blob": ""}}
	data, err := runtime.Encode(codec, cm)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if size < len(data) {
		t.Fatalf("size %d is below the empty configmap's %d bytes", size, len(data))
	}
	cm.Data["blob"] = strings.Repeat("x", size-len(data))
	if data, err = runtime.Encode(codec, cm); err != nil || len(data) != size {
		t.Fatalf("encoded configmap is %d bytes (err %v), want %d", len(data), err, size)
	}
	return cm
}

func testLargeObjects(t *testing.T, e *env) {
	const under = MaxObjectSize - 4096
	big := configMapOfSize(t, e.cmRes.Codec, "under", under)
	out := &corev1.ConfigMap{}
	if err := e.cms.Create(e.ctx, "/configmaps/ns/under", big, out); err != nil {
		t.Fatalf("create %d-byte object: %v", under, err)
	}
	got := &corev1.ConfigMap{}
	if err := e.cms.Get(e.ctx, "/configmaps/ns/under", storage.GetOptions{}, got); err != nil {
		t.Fatalf("get: %v", err)
	}
	if len(got.Data["blob"]) != len(big.Data["blob"]) {
		t.Fatalf("got blob of %d bytes, want %d", len(got.Data["blob"]), len(big.Data["blob"]))
	}

	rev := e.currentRevision()
	tooBig := configMapOfSize(t, e.cmRes.Codec, "over", MaxObjectSize+1)
	err := e.cms.Create(e.ctx, "/configmaps/ns/over", tooBig, &corev1.ConfigMap{})
	wantCode(t, "create over the limit", err, storage.ErrCodeRequestTooLarge)

	err = e.cms.GuaranteedUpdate(e.ctx, "/configmaps/ns/under", &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap)
		cm.Data["blob"] += strings.Repeat("y", 8192)
		return cm, nil
	}, nil)
	wantCode(t, "update over the limit", err, storage.ErrCodeRequestTooLarge)
	if got := e.currentRevision(); got != rev {
		t.Fatalf("current revision %d after rejected writes, want %d", got, rev)
	}
}

func testCancelledContext(t *testing.T, e *env) {
	e.create("ns", "a", nil, "")
	rev := e.currentRevision()
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	if err := e.pods.Create(ctx, podKey("ns", "b"), newPod("ns", "b", nil, ""), &corev1.Pod{}); err == nil {
		t.Errorf("create with cancelled context: got nil error")
	}
	err := e.pods.GuaranteedUpdate(ctx, podKey("ns", "a"), &corev1.Pod{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
		p := in.(*corev1.Pod)
		p.Labels = map[string]string{"changed": "true"}
		return p, nil
	}, nil)
	if err == nil {
		t.Errorf("update with cancelled context: got nil error")
	}
	if err := e.pods.Delete(ctx, podKey("ns", "a"), &corev1.Pod{}, nil, noValidation, nil); err == nil {
		t.Errorf("delete with cancelled context: got nil error")
	}
	if err := e.pods.GetList(ctx, "/pods", storage.ListOptions{Recursive: true}, &corev1.PodList{}); err == nil {
		t.Errorf("list with cancelled context: got nil error")
	}
	if got := e.currentRevision(); got != rev {
		t.Fatalf("current revision %d, want %d: nothing may be written with a cancelled context", got, rev)
	}
}
