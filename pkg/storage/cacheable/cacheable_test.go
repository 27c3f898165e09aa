package cacheable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// TestEncodeOncePerEncoder encodes one shared object from many goroutines
// with two encoders: each encoder runs once, every writer gets the same
// bytes as a direct encoding, and the shared object is never changed
// (encoding sets the kind on its copy only).
func TestEncodeOncePerEncoder(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(s)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "7"}, Data: map[string]string{"k": "v"}}
	o := New(cm)
	var runs atomic.Int32
	for _, mediaType := range []string{"application/json", "application/vnd.kubernetes.protobuf"} {
		info, _ := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
		enc := codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
		var want bytes.Buffer
		if err := enc.Encode(cm.DeepCopy(), &want); err != nil {
			t.Fatal(err)
		}
		counting := func(obj runtime.Object, w io.Writer) error { runs.Add(1); return enc.Encode(obj, w) }
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				var got bytes.Buffer
				if err := o.CacheEncode(enc.Identifier(), counting, &got); err != nil {
					t.Error(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Errorf("%s: got %q, want %q", mediaType, got.Bytes(), want.Bytes())
				}
			})
		}
		wg.Wait()
		// The encoders also accept the Object itself, as apimachinery's
		// do for runtime.CacheableObject.
		var direct bytes.Buffer
		if err := enc.Encode(o, &direct); err != nil || !bytes.Equal(direct.Bytes(), want.Bytes()) {
			t.Errorf("%s: encoding the Object: %v %q", mediaType, err, direct.Bytes())
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("encode ran %d times, want once per encoder (2)", n)
	}
	if cm.Kind != "" || cm.APIVersion != "" {
		t.Errorf("the shared object was changed: %v", cm.TypeMeta)
	}
	if got := o.GetObject().(*corev1.ConfigMap); got == cm || got.Data["k"] != "v" {
		t.Errorf("GetObject: %p %v, want a copy of %p", got, got, cm)
	}
}

// TestEncodeErrorKept: a failed encoding is reported to every writer.
func TestEncodeErrorKept(t *testing.T) {
	o := New(&corev1.ConfigMap{})
	boom := errors.New("boom")
	for range 2 {
		err := o.CacheEncode("x", func(runtime.Object, io.Writer) error { return boom }, io.Discard)
		if !errors.Is(err, boom) {
			t.Fatalf("got %v, want boom", err)
		}
	}
}

func TestWanted(t *testing.T) {
	if Wanted(context.Background()) || !Wanted(WithObjects(context.Background())) {
		t.Fatal("Wanted does not follow WithObjects")
	}
}

// BenchmarkCacheEncodeShared is a watch event's fan-out as the watch
// handlers see it: one shared Object, its encoding made once, then asked
// for by many goroutines at once with ids equal in content but not the
// same string (each watch encoder builds its own), as many times as
// b.N. Most watchers' requests hit an encoding that exists.
func BenchmarkCacheEncodeShared(b *testing.B) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns", ResourceVersion: "7"}, Data: map[string]string{"k": "v"}}
	encode := func(_ runtime.Object, w io.Writer) error {
		_, err := w.Write([]byte(`{"type":"MODIFIED"}`))
		return err
	}
	base := "application/json;stream=watch;meta.k8s.io/v1;event=json;type="
	o := New(cm)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		// Ids of the same content in fresh strings, as separate watch
		// encoders have them.
		ids := []runtime.Identifier{runtime.Identifier(base + string("MODIFIED")), runtime.Identifier(base + string("ADDED"))}
		for pb.Next() {
			for _, id := range ids {
				if err := o.CacheEncode(id, encode, io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestEncodeOncePerIDConcurrent: goroutines asking at once for the
// encodings of several ids of a fresh Object (racing to add them to its
// list) each get their id's output, and each id's encode runs once.
func TestEncodeOncePerIDConcurrent(t *testing.T) {
	const ids, perID = 8, 16
	for round := range 50 {
		o := New(&corev1.ConfigMap{})
		var runs [ids]atomic.Int32
		start := make(chan struct{})
		var wg sync.WaitGroup
		for g := range ids * perID {
			k := g % ids
			wg.Go(func() {
				// A fresh string per goroutine: ids are compared by content.
				id := runtime.Identifier(fmt.Sprintf("id-%d", k))
				want := fmt.Sprintf("encoded %d", k)
				<-start
				raw, err := o.Encoded(id, func(_ runtime.Object, w io.Writer) error {
					runs[k].Add(1)
					_, err := io.WriteString(w, want)
					return err
				})
				if err != nil || string(raw) != want {
					t.Errorf("round %d, id %d: got %q, %v; want %q", round, k, raw, err, want)
				}
			})
		}
		close(start)
		wg.Wait()
		for k := range runs {
			if n := runs[k].Load(); n != 1 {
				t.Fatalf("round %d: encode of id %d ran %d times, want once", round, k, n)
			}
		}
	}
}
