package core

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/controlplane/defaults/corev1"
)

// FuzzValidatePod: any pod a client can send is validated (create,
// update against a valid pod, status, ephemeral containers, resize,
// template) without panicking.
func FuzzValidatePod(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"a"},"spec":{"containers":[{"name":"a","image":"b"}]}}`,
		`{"metadata":{"name":"a","annotations":{"scheduler.alpha.kubernetes.io/tolerations":"[{\"key\":\"x\"}]","controller.kubernetes.io/pod-deletion-cost":"+1"}},"spec":{"hostNetwork":true,"containers":[{"name":"a","image":"b","ports":[{"containerPort":1,"hostPort":2}],"resources":{"limits":{"hugepages-2Mi":"3Mi"}}}]}}`,
		`{"spec":{"volumes":[{"name":"v","projected":{"sources":[{"downwardAPI":{"items":[{"path":"../x","fieldRef":{"fieldPath":"metadata.labels['a']"}}]}},{"serviceAccountToken":{"path":"/t"}}]}}],"containers":[{"name":"a","image":"b","volumeMounts":[{"name":"v","mountPath":"/m","subPath":"../a"}]}]}}`,
		`{"spec":{"os":{"name":"windows"},"securityContext":{"windowsOptions":{"runAsUserName":"a\\b\\c","hostProcess":true}},"containers":[{"name":"a","image":"b","lifecycle":{"stopSignal":"SIGFOO","preStop":{"sleep":{"seconds":-1}}}}]}}`,
		`{"spec":{"resources":{"limits":{"cpu":"1"},"requests":{"cpu":"2"}},"initContainers":[{"name":"i","image":"b","restartPolicy":"Always","resources":{"requests":{"cpu":"3"}}}],"containers":[{"name":"a","image":"b"}],"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"matchLabelKeys":["a","a"],"topologyKey":""}]}}}}`,
	} {
		f.Add([]byte(seed))
	}
	base := validPod()
	f.Fuzz(func(t *testing.T, data []byte) {
		pod := &corev1.Pod{}
		if err := json.Unmarshal(data, pod); err != nil {
			return
		}
		defaultscorev1.SetObjectDefaults_Pod(pod)
		defaultscorev1.PrepareForCreate(pod)
		opts := ValidationOptionsForPodSpec(&pod.Spec, &base.Spec, &pod.ObjectMeta, &base.ObjectMeta)
		_ = ValidatePod(pod, opts)
		_ = ValidatePodUpdate(pod, base, opts)
		_ = ValidatePodUpdate(base, pod, opts)
		_ = ValidatePodStatusUpdate(pod, base, opts)
		_ = ValidatePodEphemeralContainersUpdate(pod, base, opts)
		_ = ValidatePodResize(pod, base, opts)
		_ = ValidatePodResize(base, pod, opts)
		_ = ValidatePodTemplateSpec(&corev1.PodTemplateSpec{ObjectMeta: pod.ObjectMeta, Spec: pod.Spec}, nil, opts)
	})
}
