package fieldmanager

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// The cost each write pays for managedFields, on a ConfigMap of ten keys.
func BenchmarkManager(b *testing.B) {
	m, err := New(Config{Kind: configMapKind})
	if err != nil {
		b.Fatal(err)
	}
	data := map[string]string{}
	cfg := map[string]any{}
	for i := range 10 {
		k := "key" + strconv.Itoa(i)
		data[k], cfg[k] = "value", "value"
	}
	live := m.UpdateNoErrors(&corev1.ConfigMap{}, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", UID: "u", ResourceVersion: "1"},
		Data:       data,
	}, "creator").(*corev1.ConfigMap)

	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			m.UpdateNoErrors(&corev1.ConfigMap{}, live.DeepCopy(), "creator")
		}
	})
	b.Run("update", func(b *testing.B) {
		next := live.DeepCopy()
		next.Data["key0"] = "changed"
		for b.Loop() {
			m.UpdateNoErrors(live, next.DeepCopy(), "updater")
		}
	})
	b.Run("apply", func(b *testing.B) {
		for b.Loop() {
			if _, err := m.Apply(live, applied(configMap("c", cfg)), "applier", true); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// What building a (sub)resource's manager costs (a server builds ~150 as
// it installs its APIs), and what its first use adds.
func BenchmarkBuild(b *testing.B) {
	tc, err := TypeConverter()
	if err != nil {
		b.Fatal(err)
	}
	c := Config{Kind: configMapKind}
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := build(c, tc, scheme.Scheme, true); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("build+use", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			m, err := build(c, tc, scheme.Scheme, true)
			if err != nil {
				b.Fatal(err)
			}
			m.managers()
		}
	})
}
