package storagetest

import (
	"context"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// testCase is one conformance case.
type testCase struct {
	name string
	run  func(t *testing.T, e *env)
}

// RunSuite runs every conformance case, each as a t.Run subtest (grouped as
// "CRUD/...", "List/...", "Watch/...", "Compaction/...") with its own Backend
// from newBackend. Cases run sequentially.
func RunSuite(t *testing.T, newBackend func(t *testing.T) Backend) {
	t.Helper()
	groups := []struct {
		name  string
		cases []testCase
	}{
		{"CRUD", crudCases()},
		{"List", listCases()},
		{"Watch", watchCases()},
		{"Compaction", compactionCases()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					b := newBackend(t)
					if s, ok := b.(Skipper); ok {
						if reason := s.SkipCase(g.name + "/" + c.name); reason != "" {
							t.Skip(reason)
						}
					}
					c.run(t, newEnv(t, b))
				})
			}
		})
	}
}

// waitTimeout bounds every wait for an event or a state; only a broken
// backend hits it.
const waitTimeout = 10 * time.Second

// env is the fixture of one case: a backend and its pod and configmap stores.
type env struct {
	t      *testing.T
	ctx    context.Context
	b      Backend
	pods   storage.Interface
	podRes Resource
	cms    storage.Interface
	cmRes  Resource
	seeds  int
}

func newEnv(t *testing.T, b Backend) *env {
	codec := Codec()
	e := &env{t: t, ctx: t.Context(), b: b, podRes: PodResource(codec), cmRes: ConfigMapResource(codec)}
	e.pods = b.Store(t, e.podRes)
	e.cms = b.Store(t, e.cmRes)
	return e
}

func podKey(ns, name string) string { return "/pods/" + ns + "/" + name }

func newPod(ns, name string, lbls map[string]string, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: lbls,
			UID: types.UID("uid-" + ns + "-" + name),
		},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

// create stores a pod and returns it as stored.
func (e *env) create(ns, name string, lbls map[string]string, node string) *corev1.Pod {
	e.t.Helper()
	out := &corev1.Pod{}
	if err := e.pods.Create(e.ctx, podKey(ns, name), newPod(ns, name, lbls, node), out); err != nil {
		e.t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	return out
}

// update applies mutate to the stored pod and returns the result.
func (e *env) update(ns, name string, mutate func(*corev1.Pod)) *corev1.Pod {
	e.t.Helper()
	out := &corev1.Pod{}
	err := e.pods.GuaranteedUpdate(e.ctx, podKey(ns, name), out, false, nil, func(in runtime.Object) (runtime.Object, error) {
		p := in.(*corev1.Pod)
		mutate(p)
		return p, nil
	}, nil)
	if err != nil {
		e.t.Fatalf("update %s/%s: %v", ns, name, err)
	}
	return out
}

// delete deletes a pod and returns the deleted object.
func (e *env) delete(ns, name string) *corev1.Pod {
	e.t.Helper()
	out := &corev1.Pod{}
	if err := e.pods.Delete(e.ctx, podKey(ns, name), out, nil, noValidation, nil); err != nil {
		e.t.Fatalf("delete %s/%s: %v", ns, name, err)
	}
	return out
}

func (e *env) get(ns, name string) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	err := e.pods.Get(e.ctx, podKey(ns, name), storage.GetOptions{}, out)
	return out, err
}

// seed writes an object outside the pods the cases use (a configmap) and
// returns its revision: a watch can then start from a real revision ("0"
// would mean "from the current state").
func (e *env) seed() uint64 {
	e.t.Helper()
	out := &corev1.ConfigMap{}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "seed", Name: "seed-" + strconv.Itoa(e.seeds)}}
	e.seeds++
	if err := e.cms.Create(e.ctx, "/configmaps/seed/"+cm.Name, cm, out); err != nil {
		e.t.Fatalf("create seed: %v", err)
	}
	return rvOf(e.t, out)
}

func (e *env) currentRevision() uint64 {
	e.t.Helper()
	rev, err := e.pods.CurrentRevision(e.ctx)
	if err != nil {
		e.t.Fatalf("current revision: %v", err)
	}
	return rev
}

// list lists pods under key recursively.
func (e *env) list(key string, opts storage.ListOptions) (*corev1.PodList, error) {
	opts.Recursive = true
	if opts.Predicate.GetAttrs == nil {
		opts.Predicate.GetAttrs = PodAttrs
	}
	out := &corev1.PodList{}
	err := e.pods.GetList(e.ctx, key, opts, out)
	return out, err
}

func noValidation(context.Context, runtime.Object) error { return nil }

func rvOf(t *testing.T, obj runtime.Object) uint64 {
	t.Helper()
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		t.Fatalf("resourceVersion of %T: %v", obj, err)
	}
	return rv
}

func listRV(t *testing.T, l *corev1.PodList) uint64 {
	t.Helper()
	rv, err := storage.ParseResourceVersion(l.ResourceVersion)
	if err != nil || rv == 0 {
		t.Fatalf("list resourceVersion %q: want a revision (err %v)", l.ResourceVersion, err)
	}
	return rv
}

func rvString(rv uint64) string { return strconv.FormatUint(rv, 10) }

func names(l *corev1.PodList) []string {
	out := make([]string, 0, len(l.Items))
	for _, p := range l.Items {
		out = append(out, p.Namespace+"/"+p.Name)
	}
	return out
}

func wantCode(t *testing.T, what string, err error, code int) {
	t.Helper()
	if !storage.HasCode(err, code) {
		t.Fatalf("%s: got error %v, want a StorageError with code %d", what, err, code)
	}
}
