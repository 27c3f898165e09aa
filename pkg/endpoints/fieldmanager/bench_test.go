package fieldmanager

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
