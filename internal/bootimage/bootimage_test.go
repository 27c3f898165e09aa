package bootimage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// The built-in image reads, marshals back to the same bytes, and
// instantiates with a new identity per object.
func TestDefaultImage(t *testing.T) {
	img, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if img.Len() < 150 {
		t.Fatalf("%d objects", img.Len())
	}
	data, err := img.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, defaultImage) {
		t.Fatal("the built-in image does not marshal back to its file")
	}
	now := time.Now().Truncate(time.Second)
	objs, err := img.Instantiate(now)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != img.Len() {
		t.Fatalf("%d objects instantiated, want %d", len(objs), img.Len())
	}
	uids := map[string]bool{}
	for k, v := range objs {
		obj, err := Decode(k, v)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := meta.Accessor(obj)
		if m.GetUID() == "" || uids[string(m.GetUID())] {
			t.Fatalf("%s: uid %q missing or not unique", k, m.GetUID())
		}
		uids[string(m.GetUID())] = true
		if !m.GetCreationTimestamp().Time.Equal(now) {
			t.Errorf("%s: creationTimestamp %v, want %v", k, m.GetCreationTimestamp(), now)
		}
		for _, c := range ConditionTimes(obj) {
			if !c.Time.Equal(now) {
				t.Errorf("%s: condition time %v, want %v", k, c, now)
			}
		}
		for _, f := range m.GetManagedFields() {
			if f.Time != nil && !f.Time.Time.Equal(now) {
				t.Errorf("%s: managed fields time %v, want %v", k, f.Time, now)
			}
		}
	}
	// The image's own objects keep the file's identity.
	for k, obj := range img.Objects() {
		m, _ := meta.Accessor(obj)
		if m.GetUID() != "" || !m.GetCreationTimestamp().Time.Equal(epoch.Time) {
			t.Fatalf("%s: instantiating changed the image (uid %q, created %v)", k, m.GetUID(), m.GetCreationTimestamp())
		}
		break
	}
}

func TestUnmarshalRefusesBrokenFiles(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":         nil,
		"no magic":      []byte("hello"),
		"truncated key": append([]byte(magic), 0x05, '/', 'n'),
		"length beyond": append([]byte(magic), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"foreign key":   append(append([]byte(magic), 5), "/pods"...),
		"undecodable":   append(append(append([]byte(magic), 13), "/namespaces/x"...), 1, 'x'),
	} {
		if _, err := Unmarshal(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// StartDefault's instantiation of the built-in file without decoding it
// makes, byte for byte, what Instantiate makes of the decoded image with
// the same uids and time.
func TestInstantiateFile(t *testing.T) {
	img, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 1, 2, 3, 456789, time.UTC)
	n := 0
	newUID := func() types.UID {
		n++
		return types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", n))
	}
	got, err := instantiateFile(defaultImage, now, newUID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != img.Len() || n != img.Len() {
		t.Fatalf("%d objects with %d uids, want %d", len(got), n, img.Len())
	}
	seen := map[types.UID]bool{}
	for k, obj := range img.Objects() {
		data, ok := got[k]
		if !ok {
			t.Fatalf("%s: missing", k)
		}
		decoded, err := Decode(k, data)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := meta.Accessor(decoded)
		uid := m.GetUID()
		if uid == "" || seen[uid] {
			t.Fatalf("%s: uid %q empty or not unique", k, uid)
		}
		seen[uid] = true
		want := obj.DeepCopyObject()
		if err := reidentify(want, uid, metav1.NewTime(now)); err != nil {
			t.Fatal(err)
		}
		wantData, err := encode(k, want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, wantData) {
			t.Fatalf("%s: instantiated without decoding, not as decoded, reidentified and encoded (-want +got):\n%s", k, cmp.Diff(want, decoded))
		}
	}
}

// Files instantiateFile cannot re-identify without decoding are refused
// (StartDefault then decodes): an object that already has a uid, a time
// that does not encode as long as epoch, an object that is not protobuf.
func TestInstantiateFileRefuses(t *testing.T) {
	img, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := img.Instantiate(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	file := func(objs map[string][]byte) []byte {
		b := []byte(magic)
		for _, k := range slices.Sorted(maps.Keys(objs)) {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = binary.AppendUvarint(b, uint64(len(objs[k])))
			b = append(b, objs[k]...)
		}
		return b
	}
	newUID := func() types.UID { return "u" }
	if _, err := instantiateFile(file(objs), time.Now(), newUID); err == nil {
		t.Error("objects with uids: no error")
	}
	if _, err := instantiateFile(defaultImage, time.Date(4000, 1, 1, 0, 0, 0, 0, time.UTC), newUID); err == nil {
		t.Error("a time longer than epoch: no error")
	}
	if _, err := instantiateFile(file(map[string][]byte{"/namespaces/x": []byte(`{"kind":"Namespace"}`)}), time.Now(), newUID); err == nil {
		t.Error("JSON object: no error")
	}
	if _, err := instantiateFile(file(map[string][]byte{"/pods/x": objs["/namespaces/default"]}), time.Now(), newUID); err == nil {
		t.Error("foreign key: no error")
	}
	// The file itself goes through.
	if _, err := instantiateFile(defaultImage, time.Now(), newUID); err != nil {
		t.Error(err)
	}
}

// What a kapi process's start pays for the built-in image: reading the
// file and instantiating it (as StartDefault did before it instantiated
// the file's bytes), or instantiating the bytes alone.
func BenchmarkInstantiateDefault(b *testing.B) {
	b.Run("decoded", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			img, err := Unmarshal(defaultImage)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := img.Instantiate(time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("file", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := instantiateFile(defaultImage, time.Now(), uuid.NewUUID); err != nil {
				b.Fatal(err)
			}
		}
	})
}
