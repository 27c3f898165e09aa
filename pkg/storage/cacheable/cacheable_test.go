package cacheable

import (
	"bytes"
	"context"
	"errors"
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
