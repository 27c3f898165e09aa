package etcd3

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/storage"
)

func newCM(name string, labels map[string]string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels, UID: types.UID("uid-" + name)},
		Data:       data,
	}
}

func cmKey(name string) string { return "/configmaps/ns/" + name }

func mustCreate(t testing.TB, s *Store, cm *corev1.ConfigMap) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	if err := s.Create(context.Background(), cmKey(cm.Name), cm, out); err != nil {
		t.Fatalf("create %s: %v", cm.Name, err)
	}
	return out
}

func rvOf(t testing.TB, obj runtime.Object) uint64 {
	t.Helper()
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		t.Fatalf("resourceVersion: %v", err)
	}
	return rv
}

func wantCode(t *testing.T, err error, code int) {
	t.Helper()
	if !storage.HasCode(err, code) {
		t.Fatalf("got error %v, want storage error code %d", err, code)
	}
}

func TestCreateGet(t *testing.T) {
	s, srv := newTestStore(t)
	ctx := context.Background()
	created := mustCreate(t, s, newCM("a", nil, map[string]string{"k": "v"}))
	rv := rvOf(t, created)
	if rv == 0 {
		t.Fatalf("got resourceVersion 0 after create")
	}

	// Stored under the prefix, without resourceVersion.
	resp, err := srv.Client().Get(ctx, "/registry/configmaps/ns/a")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("raw get: %v, %d kvs", err, len(resp.Kvs))
	}
	if strings.Contains(string(resp.Kvs[0].Value), "resourceVersion") {
		t.Errorf("stored object has a resourceVersion: %s", resp.Kvs[0].Value)
	}

	err = s.Create(ctx, cmKey("a"), newCM("a", nil, nil), nil)
	wantCode(t, err, storage.ErrCodeKeyExists)

	withRV := newCM("b", nil, nil)
	withRV.ResourceVersion = "5"
	wantCode(t, s.Create(ctx, cmKey("b"), withRV, nil), storage.ErrCodeInvalidObj)

	tests := []struct {
		name     string
		key      string
		opts     storage.GetOptions
		wantCode int
		wantRV   uint64
	}{
		{name: "latest", key: cmKey("a"), wantRV: rv},
		{name: "rv 0", key: cmKey("a"), opts: storage.GetOptions{ResourceVersion: "0"}, wantRV: rv},
		{name: "rv current", key: cmKey("a"), opts: storage.GetOptions{ResourceVersion: strconv.FormatUint(rv, 10)}, wantRV: rv},
		{name: "rv too large", key: cmKey("a"), opts: storage.GetOptions{ResourceVersion: strconv.FormatUint(rv+100, 10)}, wantCode: storage.ErrCodeTooLargeResourceVersion},
		{name: "missing", key: cmKey("zz"), wantCode: storage.ErrCodeKeyNotFound},
		{name: "missing ignored", key: cmKey("zz"), opts: storage.GetOptions{IgnoreNotFound: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := &corev1.ConfigMap{Data: map[string]string{"stale": "x"}}
			err := s.Get(ctx, tt.key, tt.opts, got)
			if tt.wantCode != 0 {
				wantCode(t, err, tt.wantCode)
				return
			}
			if err != nil {
				t.Fatalf("get: %v", err)
			}
			if got.Data["stale"] != "" {
				t.Errorf("got stale field kept in output object: %v", got.Data)
			}
			if gotRV := rvOf(t, got); gotRV != tt.wantRV {
				t.Errorf("got resourceVersion %d, want %d", gotRV, tt.wantRV)
			}
		})
	}

	cur, err := s.CurrentRevision(ctx)
	if err != nil || cur != rv {
		t.Errorf("got CurrentRevision %d, %v, want %d", cur, err, rv)
	}
}

func TestInvalidKeys(t *testing.T) {
	s, _ := newTestStore(t)
	for _, key := range []string{"", "/", "/a/../b", "..", "/a/./b", "/a/.."} {
		if err := s.Get(context.Background(), key, storage.GetOptions{}, &corev1.ConfigMap{}); err == nil {
			t.Errorf("Get(%q): got nil error, want invalid key", key)
		}
	}
}

func TestObjectSizeLimit(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	// The encoded form adds a little JSON around the value.
	big := newCM("big", nil, map[string]string{"v": strings.Repeat("x", MaxObjectSize)})
	wantCode(t, s.Create(ctx, cmKey("big"), big, nil), storage.ErrCodeRequestTooLarge)

	under := newCM("under", nil, map[string]string{"v": strings.Repeat("x", MaxObjectSize-300)})
	if err := s.Create(ctx, cmKey("under"), under, nil); err != nil {
		t.Fatalf("create an object just under the limit: %v", err)
	}
	err := s.GuaranteedUpdate(ctx, cmKey("under"), &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap)
		cm.Data["v"] += strings.Repeat("y", 400)
		return cm, nil
	}, nil)
	wantCode(t, err, storage.ErrCodeRequestTooLarge)
}

func TestDelete(t *testing.T) {
	ctx := context.Background()
	uid := func(s string) *types.UID { u := types.UID(s); return &u }
	str := func(s string) *string { return &s }
	errValidate := errors.New("refused")
	tests := []struct {
		name     string
		pre      func(created *corev1.ConfigMap) *storage.Preconditions
		validate storage.ValidateObjectFunc
		cached   func(created *corev1.ConfigMap) runtime.Object
		wantCode int
		wantErr  error
	}{
		{name: "plain"},
		{name: "uid ok", pre: func(c *corev1.ConfigMap) *storage.Preconditions {
			return &storage.Preconditions{UID: uid(string(c.UID))}
		}},
		{name: "uid mismatch", pre: func(*corev1.ConfigMap) *storage.Preconditions { return &storage.Preconditions{UID: uid("other")} }, wantCode: storage.ErrCodeResourceVersionConflicts},
		{name: "rv ok", pre: func(c *corev1.ConfigMap) *storage.Preconditions {
			return &storage.Preconditions{ResourceVersion: str(c.ResourceVersion)}
		}},
		{name: "rv mismatch", pre: func(*corev1.ConfigMap) *storage.Preconditions {
			return &storage.Preconditions{ResourceVersion: str("1")}
		}, wantCode: storage.ErrCodeResourceVersionConflicts},
		{name: "validation refuses", validate: func(context.Context, runtime.Object) error { return errValidate }, wantErr: errValidate},
		{name: "stale cache retried", cached: func(c *corev1.ConfigMap) runtime.Object {
			old := c.DeepCopy()
			old.ResourceVersion = "1"
			old.Data = map[string]string{"old": "1"}
			return old
		}},
		{name: "stale cache with rv precondition", cached: func(c *corev1.ConfigMap) runtime.Object {
			old := c.DeepCopy()
			old.ResourceVersion = "1"
			return old
		}, pre: func(c *corev1.ConfigMap) *storage.Preconditions {
			return &storage.Preconditions{ResourceVersion: str(c.ResourceVersion)}
		}},
	}
	s, _ := newTestStore(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := fmt.Sprintf("d%d", i)
			created := mustCreate(t, s, newCM(name, nil, map[string]string{"k": "v"}))
			// A second write so that a guess at the first revision is stale.
			created = updateData(t, s, name, "k", "v2")
			var pre *storage.Preconditions
			if tt.pre != nil {
				pre = tt.pre(created)
			}
			var cached runtime.Object
			if tt.cached != nil {
				cached = tt.cached(created)
			}
			out := &corev1.ConfigMap{}
			err := s.Delete(ctx, cmKey(name), out, pre, tt.validate, cached)
			switch {
			case tt.wantCode != 0:
				wantCode(t, err, tt.wantCode)
				return
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("got error %v, want %v", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("delete: %v", err)
			}
			if out.Data["k"] != "v2" {
				t.Errorf("got deleted object data %v, want the last stored one", out.Data)
			}
			cur, _ := s.CurrentRevision(ctx)
			if got := rvOf(t, out); got != cur {
				t.Errorf("got deleted object resourceVersion %d, want the deletion revision %d", got, cur)
			}
			wantCode(t, s.Get(ctx, cmKey(name), storage.GetOptions{}, &corev1.ConfigMap{}), storage.ErrCodeKeyNotFound)
		})
	}
	t.Run("missing", func(t *testing.T) {
		wantCode(t, s.Delete(ctx, cmKey("missing"), &corev1.ConfigMap{}, nil, nil, nil), storage.ErrCodeKeyNotFound)
		cached := newCM("missing", nil, nil)
		cached.ResourceVersion = "3"
		wantCode(t, s.Delete(ctx, cmKey("missing"), &corev1.ConfigMap{}, nil, nil, cached), storage.ErrCodeKeyNotFound)
	})
}

func updateData(t testing.TB, s *Store, name, k, v string) *corev1.ConfigMap {
	t.Helper()
	out := &corev1.ConfigMap{}
	err := s.GuaranteedUpdate(context.Background(), cmKey(name), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		cm := in.(*corev1.ConfigMap)
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[k] = v
		return cm, nil
	}, nil)
	if err != nil {
		t.Fatalf("update %s: %v", name, err)
	}
	return out
}

func TestGuaranteedUpdateConcurrentCounter(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	mustCreate(t, s, newCM("counter", nil, map[string]string{"n": "0"}))
	const workers, perWorker = 8, 10
	var calls sync.Map
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for range perWorker {
				var n int
				err := s.GuaranteedUpdate(ctx, cmKey("counter"), &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) {
					n++
					cm := in.(*corev1.ConfigMap)
					v, err := strconv.Atoi(cm.Data["n"])
					if err != nil {
						return nil, err
					}
					cm.Data["n"] = strconv.Itoa(v + 1)
					return cm, nil
				}, nil)
				if err != nil {
					errs <- err
					return
				}
				calls.Store(fmt.Sprint(w), n)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("update: %v", err)
	}
	got := &corev1.ConfigMap{}
	if err := s.Get(ctx, cmKey("counter"), storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(workers * perWorker); got.Data["n"] != want {
		t.Errorf("got counter %s, want %s", got.Data["n"], want)
	}
}

func TestGuaranteedUpdate(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	created := mustCreate(t, s, newCM("u", nil, map[string]string{"k": "v"}))
	rv := rvOf(t, created)

	t.Run("no-op writes nothing", func(t *testing.T) {
		out := &corev1.ConfigMap{}
		err := s.GuaranteedUpdate(ctx, cmKey("u"), out, false, nil, func(in runtime.Object) (runtime.Object, error) { return in, nil }, nil)
		if err != nil {
			t.Fatal(err)
		}
		cur, _ := s.CurrentRevision(ctx)
		if got := rvOf(t, out); got != rv || cur != rv {
			t.Errorf("got object rv %d and revision %d after a no-op update, want both %d", got, cur, rv)
		}
	})

	t.Run("stale cached object is retried", func(t *testing.T) {
		updateData(t, s, "u", "k", "v2")
		stale := created.DeepCopy()
		var seen []string
		out := &corev1.ConfigMap{}
		err := s.GuaranteedUpdate(ctx, cmKey("u"), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
			cm := in.(*corev1.ConfigMap)
			seen = append(seen, cm.Data["k"])
			cm.Data["seen"] = cm.Data["k"]
			return cm, nil
		}, stale)
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 2 || seen[0] != "v" || seen[1] != "v2" {
			t.Errorf("got tryUpdate inputs %v, want [v v2]", seen)
		}
		if out.Data["seen"] != "v2" {
			t.Errorf("got stored %v, want update applied to v2", out.Data)
		}
		if stale.ResourceVersion != created.ResourceVersion {
			t.Errorf("cached object was modified: rv %q", stale.ResourceVersion)
		}
	})

	t.Run("not found", func(t *testing.T) {
		err := s.GuaranteedUpdate(ctx, cmKey("nope"), &corev1.ConfigMap{}, false, nil, func(in runtime.Object) (runtime.Object, error) { return in, nil }, nil)
		wantCode(t, err, storage.ErrCodeKeyNotFound)
	})

	t.Run("ignoreNotFound creates", func(t *testing.T) {
		out := &corev1.ConfigMap{}
		err := s.GuaranteedUpdate(ctx, cmKey("fresh"), out, true, nil, func(in runtime.Object) (runtime.Object, error) {
			if in.(*corev1.ConfigMap).Name != "" {
				t.Errorf("got non-zero input for a missing key")
			}
			return newCM("fresh", nil, map[string]string{"x": "1"}), nil
		}, nil)
		if err != nil || out.Data["x"] != "1" || rvOf(t, out) == 0 {
			t.Fatalf("got %v, %v; want created object", out, err)
		}
	})

	t.Run("precondition", func(t *testing.T) {
		old := "1"
		err := s.GuaranteedUpdate(ctx, cmKey("u"), &corev1.ConfigMap{}, false, &storage.Preconditions{ResourceVersion: &old},
			func(in runtime.Object) (runtime.Object, error) { return in, nil }, nil)
		wantCode(t, err, storage.ErrCodeResourceVersionConflicts)
	})

	t.Run("tryUpdate error", func(t *testing.T) {
		boom := errors.New("boom")
		err := s.GuaranteedUpdate(ctx, cmKey("u"), &corev1.ConfigMap{}, false, nil,
			func(runtime.Object) (runtime.Object, error) { return nil, boom }, nil)
		if !errors.Is(err, boom) {
			t.Errorf("got %v, want %v", err, boom)
		}
	})

	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := s.GuaranteedUpdate(cctx, cmKey("u"), &corev1.ConfigMap{}, false, nil,
			func(in runtime.Object) (runtime.Object, error) { return in, nil }, nil)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
}
