package scheme

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestCodecsRoundTripEveryWireFormat(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "b"}, Data: map[string]string{"k": "v"}}
	for _, mt := range []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML, runtime.ContentTypeProtobuf} {
		info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), mt)
		if !ok {
			t.Fatalf("no serializer for %s", mt)
		}
		enc := Codecs.EncoderForVersion(info.Serializer, corev1.SchemeGroupVersion)
		var buf bytes.Buffer
		if err := enc.Encode(cm, &buf); err != nil {
			t.Fatalf("%s: encode: %v", mt, err)
		}
		out, _, err := Codecs.UniversalDeserializer().Decode(buf.Bytes(), nil, nil)
		if err != nil {
			t.Fatalf("%s: decode: %v", mt, err)
		}
		got, ok := out.(*corev1.ConfigMap)
		if !ok || got.Name != "a" || got.Data["k"] != "v" {
			t.Fatalf("%s: got %#v", mt, out)
		}
	}
	gvks, _, err := Scheme.ObjectKinds(&metav1.Status{})
	if err != nil || len(gvks) == 0 {
		t.Fatalf("Status not registered: %v", err)
	}
}
