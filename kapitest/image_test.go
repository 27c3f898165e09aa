package kapitest

import (
	"bytes"
	"context"
	"flag"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kapi-dev/kapi/internal/bootimage"
)

// imageObjects decodes the objects of s's storage that an image holds.
func imageObjects(t *testing.T, s *Server) map[string]runtime.Object {
	t.Helper()
	state, err := s.storage.read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]runtime.Object{}
	for k, v := range state {
		if !bootimage.Holds(k) {
			continue
		}
		obj, err := bootimage.Decode(k, v)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = obj
	}
	return out
}

// withoutIdentity clears what differs between two servers' bootstraps of
// the same objects: uid, creationTimestamp, the times of managed fields
// and status conditions.
func withoutIdentity(t *testing.T, objs map[string]runtime.Object) map[string]runtime.Object {
	t.Helper()
	out := map[string]runtime.Object{}
	for k, obj := range objs {
		obj = obj.DeepCopyObject()
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatal(err)
		}
		m.SetUID("")
		m.SetCreationTimestamp(metav1.Time{})
		mf := m.GetManagedFields()
		for i := range mf {
			mf[i].Time = nil
		}
		for _, c := range bootimage.ConditionTimes(obj) {
			*c = metav1.Time{}
		}
		out[k] = obj
	}
	return out
}

// A server started from the process's bootstrap image stores the same
// bootstrap objects as one that bootstrapped from nothing, but with its
// own identities: uids of its own, creation and managed-fields times of
// its start.
func TestBootstrapImageSeedsLikeAColdStart(t *testing.T) {
	Start(t) // makes the image if no server of the process did yet
	// Stored times are whole seconds: the image's are then before begin.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	begin := metav1.Now().Rfc3339Copy()
	cold := Start(t, WithOptions(func(o *Options) { o.coldBootstrap = true }))
	warm := Start(t)
	warm2 := Start(t)
	if cold.seeded || !warm.seeded || !warm2.seeded {
		t.Fatalf("seeded: cold %v, warm %v, warm2 %v; want false, true, true", cold.seeded, warm.seeded, warm2.seeded)
	}

	// Status writes (APF's FlowSchema conditions) may land after ready on
	// either server: compare until they agree.
	var diff string
	var coldObjs, warmObjs map[string]runtime.Object
	for deadline := time.Now().Add(10 * time.Second); ; {
		coldObjs, warmObjs = imageObjects(t, cold), imageObjects(t, warm)
		diff = cmp.Diff(withoutIdentity(t, coldObjs), withoutIdentity(t, warmObjs))
		if diff == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if diff != "" {
		t.Fatalf("seeded server's bootstrap objects differ from a cold start's (-cold +seeded):\n%s", diff)
	}
	if len(warmObjs) < 150 {
		t.Fatalf("only %d bootstrap objects: %v", len(warmObjs), slices.Sorted(maps.Keys(warmObjs)))
	}

	warm2Objs := imageObjects(t, warm2)
	uids := map[types.UID]string{}
	for _, objs := range []map[string]runtime.Object{coldObjs, warmObjs, warm2Objs} {
		for k, obj := range objs {
			m, _ := meta.Accessor(obj)
			if m.GetUID() == "" {
				t.Fatalf("%s has no uid", k)
			}
			if other, dup := uids[m.GetUID()]; dup {
				t.Fatalf("%s has the uid of %s (%s)", k, other, m.GetUID())
			}
			uids[m.GetUID()] = k
		}
	}
	conditions := 0
	for k, obj := range warmObjs {
		for _, c := range bootimage.ConditionTimes(obj) {
			conditions++
			if c.Before(&begin) {
				t.Errorf("%s: a condition's lastTransitionTime %v is before the server started (%v)", k, c, begin)
			}
		}
		m, _ := meta.Accessor(obj)
		if ts := m.GetCreationTimestamp(); ts.Before(&begin) {
			t.Errorf("%s: creationTimestamp %v is before the server started (%v)", k, ts, begin)
		}
		for _, f := range m.GetManagedFields() {
			if f.Time != nil && f.Time.Before(&begin) {
				t.Errorf("%s: managed fields of %s at %v, before the server started (%v)", k, f.Manager, f.Time, begin)
			}
		}
	}
	if conditions == 0 {
		t.Error("no status conditions among the bootstrap objects")
	}
}

// Servers of other options do not share an image, and a server that
// installs CRDs makes none.
func TestBootstrapImageKey(t *testing.T) {
	base, ok := imageKeyOf(Options{StorageBackend: "memory"})
	if !ok {
		t.Fatal("default options: no image key")
	}
	for name, o := range map[string]Options{
		"etcd":    {StorageBackend: "etcd3"},
		"flags":   {StorageBackend: "memory", Flags: []string{"--authorization-mode=AlwaysAllow"}},
		"audit":   {StorageBackend: "memory", AuditLogPath: "/tmp/audit.log"},
		"cold":    {StorageBackend: "memory", coldBootstrap: true},
		"reqhead": {StorageBackend: "memory", RequestHeaderClientCAFile: "/tmp/ca.crt"},
	} {
		if _, ok := imageKeyOf(o); ok {
			t.Errorf("%s: has an image key", name)
		}
	}
	for name, o := range map[string]Options{
		"version": {StorageBackend: "memory", KubernetesVersion: "v1.31.4"},
		"cidr":    {StorageBackend: "memory", ServiceClusterIPRange: "10.1.0.0/16"},
		"cors":    {StorageBackend: "memory", CORSAllowedOrigins: []string{}},
	} {
		k, ok := imageKeyOf(o)
		if !ok || k == base {
			t.Errorf("%s: key %+v (ok %v), the default's is %+v", name, k, ok, base)
		}
	}
	same, _ := imageKeyOf(Options{StorageBackend: "memory", DataDir: "/x", SecurePort: 1234, StartTimeout: time.Minute})
	if same != base {
		t.Errorf("per-server options change the key: %+v, %+v", same, base)
	}
}

var updateBootstrapImage = flag.Bool("update-bootstrap-image", false,
	"write the default bootstrap image (internal/bootimage/default.img) from a cold start")

// defaultImagePath is the built-in image's file, relative to this package.
const defaultImagePath = "../internal/bootimage/default.img"

// The built-in image of the default options is what a cold start of the
// server writes with those options, once its hooks and status writers are
// done: a server seeded from it has nothing left to write. When the hooks
// change (a new bootstrap role, a new API group, ...), this test fails
// until the file is made again with -update-bootstrap-image.
func TestDefaultBootstrapImageCurrent(t *testing.T) {
	cold := Start(t, WithOptions(func(o *Options) { o.coldBootstrap = true }))
	want, err := os.ReadFile(defaultImagePath)
	if err != nil && !*updateBootstrapImage {
		t.Fatal(err)
	}
	// Status writes (APF's conditions) land after ready, later on a
	// loaded machine: read until the image is the file's (or, to make
	// the file, until it has not changed for a second), at most 30 s.
	var got []byte
	stable := 0
	for deadline := time.Now().Add(30 * time.Second); ; {
		state, err := cold.storage.read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		img, err := bootimage.New(state)
		if err != nil {
			t.Fatal(err)
		}
		data, err := img.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(data, got) {
			stable++
		} else {
			stable = 0
		}
		got = data
		if *updateBootstrapImage && stable == 10 {
			break
		}
		if !*updateBootstrapImage && bytes.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if *updateBootstrapImage {
		if stable < 10 {
			t.Fatal("the bootstrap objects did not settle within 30 s")
		}
		if err := os.WriteFile(defaultImagePath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", defaultImagePath, len(got))
		return
	}
	const fix = "go test ./kapitest -run TestDefaultBootstrapImageCurrent -update-bootstrap-image"
	wantImg, err := bootimage.Unmarshal(want)
	if err != nil {
		t.Fatalf("%s: %v; make it again: %s", defaultImagePath, err, fix)
	}
	gotImg, err := bootimage.Unmarshal(got)
	if err != nil {
		t.Fatal(err)
	}
	t.Fatalf("the built-in bootstrap image is not what the hooks write (-built-in +cold start):\n%s\nmake it again: %s",
		cmp.Diff(wantImg.Objects(), gotImg.Objects()), fix)
}
