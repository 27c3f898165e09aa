package bootimage

import (
	"bytes"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
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
