package serviceaccount

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// accounts is a Getter over fixed service accounts ("ns/name").
type accounts struct {
	m     map[string]*corev1.ServiceAccount
	calls atomic.Int32
}

func (a *accounts) Get(_ context.Context, ns, name string) (runtime.Object, error) {
	a.calls.Add(1)
	if sa, ok := a.m[ns+"/"+name]; ok {
		return sa.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("serviceaccounts"), name)
}

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func newPlugin(sas ...*corev1.ServiceAccount) (*Plugin, *accounts) {
	a := &accounts{m: map[string]*corev1.ServiceAccount{}}
	for _, sa := range sas {
		a.m[sa.Namespace+"/"+sa.Name] = sa
	}
	p := New(a)
	p.Retry = func() time.Duration { return time.Millisecond }
	p.generateName = func(base string) string { return base + "abcde" }
	return p, a
}

func sa(name string, mutate ...func(*corev1.ServiceAccount)) *corev1.ServiceAccount {
	s := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	for _, m := range mutate {
		m(s)
	}
	return s
}

func create(p *Plugin, pod *corev1.Pod) error {
	a := admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "ns", Object: pod}
	if err := p.Admit(context.Background(), a); err != nil {
		return err
	}
	return p.Validate(context.Background(), a)
}

// TestDefaultAccountAndTokenVolume checks the pod upstream v1.37 stores:
// serviceAccountName default, the kube-api-access-<5 chars> projected
// volume of plugin/pkg/admission/serviceaccount TokenVolumeSource, and its
// read-only mount in every container.
func TestDefaultAccountAndTokenVolume(t *testing.T) {
	p, _ := newPlugin(sa("default", func(s *corev1.ServiceAccount) {
		s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	}))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "i"}},
		Containers: []corev1.Container{{Name: "c"}, {Name: "own", VolumeMounts: []corev1.VolumeMount{
			{Name: "mine", MountPath: DefaultAPITokenMountPath},
		}}},
	}}
	if err := create(p, pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.ServiceAccountName != "default" {
		t.Errorf("serviceAccountName = %q", pod.Spec.ServiceAccountName)
	}
	mode, exp := int32(420), int64(3607)
	wantVolume := corev1.Volume{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: &mode,
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		},
	}}}
	if len(pod.Spec.Volumes) != 1 || !reflect.DeepEqual(pod.Spec.Volumes[0], wantVolume) {
		t.Errorf("volumes:\n got %+v\nwant %+v", pod.Spec.Volumes, wantVolume)
	}
	mount := corev1.VolumeMount{Name: "kube-api-access-abcde", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}
	for _, c := range []corev1.Container{pod.Spec.InitContainers[0], pod.Spec.Containers[0]} {
		if !reflect.DeepEqual(c.VolumeMounts, []corev1.VolumeMount{mount}) {
			t.Errorf("container %s mounts %+v", c.Name, c.VolumeMounts)
		}
	}
	if len(pod.Spec.Containers[1].VolumeMounts) != 1 || pod.Spec.Containers[1].VolumeMounts[0].Name != "mine" {
		t.Errorf("a container with its own mount at the token path got %+v", pod.Spec.Containers[1].VolumeMounts)
	}
	if !reflect.DeepEqual(pod.Spec.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "pull"}}) {
		t.Errorf("imagePullSecrets %+v", pod.Spec.ImagePullSecrets)
	}
}

func TestAutomountOptOut(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		name       string
		sa, pod    *bool
		wantVolume bool
	}{
		{"default", nil, nil, true},
		{"account opts out", &no, nil, false},
		{"pod wins over account", &no, &yes, true},
		{"pod opts out", nil, &no, false},
	} {
		p, _ := newPlugin(sa("default", func(s *corev1.ServiceAccount) { s.AutomountServiceAccountToken = tc.sa }))
		pod := &corev1.Pod{Spec: corev1.PodSpec{AutomountServiceAccountToken: tc.pod, Containers: []corev1.Container{{Name: "c"}}}}
		if err := create(p, pod); err != nil {
			t.Fatal(err)
		}
		if got := len(pod.Spec.Volumes) == 1; got != tc.wantVolume {
			t.Errorf("%s: volume %v, want %v", tc.name, got, tc.wantVolume)
		}
	}
}

// TestRefusals checks upstream's messages.
func TestRefusals(t *testing.T) {
	enforcing := sa("strict", func(s *corev1.ServiceAccount) {
		s.Annotations = map[string]string{EnforceMountableSecretsAnnotation: "true"}
		s.Secrets = []corev1.ObjectReference{{Name: "ok"}}
		s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull"}}
	})
	p, calls := newPlugin(enforcing)
	secretEnv := func(secret string) []corev1.EnvVar {
		return []corev1.EnvVar{{Name: "E", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "k"}}}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"missing default account", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}},
			`pods "p" is forbidden: error looking up service account ns/default: serviceaccount "default" not found`},
		{"missing named account", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "p-"}, Spec: corev1.PodSpec{ServiceAccountName: "nope"}},
			`pods "p-" is forbidden: error looking up service account ns/nope: serviceaccount "nope" not found`},
		{"secret volume not mountable", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{ServiceAccountName: "strict",
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "other"}}}}}},
			`pods "p" is forbidden: volume with secret.secretName="other" is not allowed because service account strict does not reference that secret`},
		{"secret env not mountable", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{ServiceAccountName: "strict",
			Containers: []corev1.Container{{Name: "c", Env: secretEnv("other")}}}},
			`pods "p" is forbidden: container c with envVar E referencing secret.secretName="other" is not allowed because service account strict does not reference that secret`},
		{"pull secret not allowed", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{ServiceAccountName: "strict",
			ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pull"}, {Name: "x"}}}},
			`pods "p" is forbidden: imagePullSecrets[1].name="x" is not allowed because service account strict does not reference that imagePullSecret`},
		{"allowed secrets", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{ServiceAccountName: "strict",
			Containers: []corev1.Container{{Name: "c", Env: secretEnv("ok")}}}}, ""},
		{"mirror pod with account", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}},
			Spec: corev1.PodSpec{ServiceAccountName: "strict"}},
			`pods "p" is forbidden: a mirror pod may not reference service accounts`},
		{"mirror pod with secret", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "x"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Env: secretEnv("ok")}}}},
			`pods "p" is forbidden: a mirror pod may not reference secrets`},
	} {
		calls.calls.Store(0)
		err := create(p, tc.pod)
		got := ""
		if err != nil {
			got = err.Error()
			if !apierrors.IsForbidden(err) {
				t.Errorf("%s: not a 403: %v", tc.name, err)
			}
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	// The default account is looked up 10 times before giving up, another
	// once (upstream getServiceAccount).
	calls.calls.Store(0)
	_ = p.Admit(context.Background(), admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "ns", Object: &corev1.Pod{}})
	if n := calls.calls.Load(); n != 10 {
		t.Errorf("default account looked up %d times, want 10", n)
	}
	calls.calls.Store(0)
	_ = p.Admit(context.Background(), admission.Attributes{Operation: admission.Create, Resource: pods, Namespace: "ns", Object: &corev1.Pod{Spec: corev1.PodSpec{ServiceAccountName: "x"}}})
	if n := calls.calls.Load(); n != 1 {
		t.Errorf("named account looked up %d times, want 1", n)
	}
}
