package corev1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

// One spec per off-by-default feature, using only that feature's field,
// for the update rule the server cannot be driven into (an object stored
// with the field, which a server with the gate off never writes):
// upstream keeps the field when the old spec uses the same feature, and
// drops it when the old spec uses another one.
func gatedSpecs() map[string]func() *corev1.PodSpec {
	container := func(f func(c *corev1.Container)) func() *corev1.PodSpec {
		return func() *corev1.PodSpec {
			c := corev1.Container{Name: "c"}
			f(&c)
			return &corev1.PodSpec{Containers: []corev1.Container{c}}
		}
	}
	return map[string]func() *corev1.PodSpec{
		"ContainerStopSignals": container(func(c *corev1.Container) {
			c.Lifecycle = &corev1.Lifecycle{StopSignal: ptr.To(corev1.SIGUSR1)}
		}),
		"H2CContainerProbe": container(func(c *corev1.Container) {
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Protocol: ptr.To(corev1.HTTPProtocolHTTP2)}}}
		}),
		"GRPCContainerProbeTLS": container(func(c *corev1.Container) {
			c.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Mode: ptr.To(corev1.GRPCProbeModePlaintext)}}}
		}),
		"AtomicWriteVolumeUserFields": func() *corev1.PodSpec {
			return &corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{{ConfigMap: &corev1.ConfigMapProjection{Items: []corev1.KeyToPath{{Key: "k", Path: "p", User: ptr.To[int64](3)}}}}},
			}}}}}
		},
		"EvictionRequestAPI": func() *corev1.PodSpec {
			return &corev1.PodSpec{EvictionResponders: []corev1.EvictionResponder{{Name: "example.com/r"}}}
		},
		"GenericWorkload": func() *corev1.PodSpec {
			return &corev1.PodSpec{SchedulingGroup: &corev1.PodSchedulingGroup{PodGroupName: ptr.To("g")}}
		},
	}
}

func TestDropDisabledPodSpecFieldsInUse(t *testing.T) {
	specs := gatedSpecs()
	for feature, mk := range specs {
		t.Run(feature, func(t *testing.T) {
			spec := mk()
			DropDisabledPodSpecFields(spec, nil)
			if equality.Semantic.DeepEqual(spec, mk()) {
				t.Errorf("create kept the field: %+v", spec)
			}
			spec = mk()
			DropDisabledPodSpecFields(spec, mk())
			if !equality.Semantic.DeepEqual(spec, mk()) {
				t.Errorf("update of a spec using the feature dropped the field: %+v", spec)
			}
			for other, mkOther := range specs {
				if other == feature {
					continue
				}
				spec = mk()
				DropDisabledPodSpecFields(spec, mkOther())
				if equality.Semantic.DeepEqual(spec, mk()) {
					t.Errorf("update of a spec using only %s kept the field", other)
				}
			}
		})
	}
}

// Ephemeral containers are visited too (pods/ephemeralcontainers), and
// a lifecycle left empty is dropped while one with a handler stays.
func TestDropDisabledPodSpecFieldsEphemeralAndLifecycle(t *testing.T) {
	spec := &corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Lifecycle: &corev1.Lifecycle{
			StopSignal: ptr.To(corev1.SIGTERM), PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}}}},
		EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
			Name: "e", Lifecycle: &corev1.Lifecycle{StopSignal: ptr.To(corev1.SIGTERM)}}}},
	}
	DropDisabledPodSpecFields(spec, &corev1.PodSpec{})
	if l := spec.Containers[0].Lifecycle; l == nil || l.StopSignal != nil || l.PreStop == nil {
		t.Errorf("container lifecycle = %+v, want the preStop alone", l)
	}
	if l := spec.EphemeralContainers[0].Lifecycle; l != nil {
		t.Errorf("ephemeral container lifecycle = %+v, want none", l)
	}
}
