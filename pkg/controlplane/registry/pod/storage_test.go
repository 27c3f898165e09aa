package pod

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	defaultscorev1 "github.com/kapi-dev/kapi/pkg/api/defaults/corev1"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func newStorage(t *testing.T, nodes NodeGetter) *Storage {
	t.Helper()
	s, err := NewREST(registrytest.Options(t), Config{Nodes: nodes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Pod.Destroy)
	return s
}

// newPod is a pod as it reaches the store: decoded, so defaulted.
func newPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "nginx:1.25",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
		}}},
	}
	for _, m := range mutate {
		m(p)
	}
	defaultscorev1.SetObjectDefaults_Pod(p)
	return p
}

func podCtx() context.Context { return registrytest.Context("", "v1", "pods", "default") }

func create(t *testing.T, s *Storage, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	out, err := s.Pod.Create(podCtx(), p, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s: %v", p.Name, err)
	}
	return out.(*corev1.Pod)
}

func get(t *testing.T, s *Storage, name string) *corev1.Pod {
	t.Helper()
	out, err := s.Pod.Get(podCtx(), name, &metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod %s: %v", name, err)
	}
	return out.(*corev1.Pod)
}

func bind(t *testing.T, s *Storage, name, node string) error {
	t.Helper()
	ctx := registrytest.Context("", "v1", "pods", "default")
	info, _ := requestInfo(ctx)
	info.Subresource, info.Name = "binding", name
	_, err := s.Binding.Create(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Target: corev1.ObjectReference{Kind: "Node", Name: node}}, nil, &metav1.CreateOptions{})
	return err
}

// Expected behaviour: upstream's pod strategy and storage
// (pkg/registry/core/pod, v1.37).
func TestPodCreate(t *testing.T) {
	s := newStorage(t, nil)
	if got := s.Pod.ShortNames(); !slices.Equal(got, []string{"po"}) {
		t.Errorf("got short names %v, want [po]", got)
	}
	if got := s.Pod.Categories(); !slices.Equal(got, []string{"all"}) {
		t.Errorf("got categories %v, want [all]", got)
	}

	in := newPod("web")
	in.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1"}
	w := &registrytest.Warnings{}
	ctx := warning.WithRecorder(podCtx(), w)
	out, err := s.Pod.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := out.(*corev1.Pod)
	if pod.Generation != 1 || pod.Status.Phase != corev1.PodPending || pod.Status.PodIP != "" || pod.Status.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("got generation %d and status %+v, want 1, Pending, Burstable", pod.Generation, pod.Status)
	}
	if len(w.List()) != 0 {
		t.Errorf("got warnings %q, want none", w.List())
	}

	// A name that is no DNS label is warned about; a deprecated node
	// label too.
	dotted := newPod("web.v2", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"beta.kubernetes.io/os": "linux"} })
	if _, err := s.Pod.Create(ctx, dotted, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]`,
		`spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`,
	}
	if got := w.List(); !slices.Equal(got, want) {
		t.Errorf("got warnings %q, want %q", got, want)
	}

	// Invalid pods are 422 with upstream's causes.
	bad := newPod("bad", func(p *corev1.Pod) {
		p.Spec.Containers[0].Name = "App"
		p.Spec.RestartPolicy = "Sometimes"
	})
	_, err = s.Pod.Create(podCtx(), bad, nil, &metav1.CreateOptions{})
	wantCauses := []string{"FieldValueInvalid spec.containers[0].name", "FieldValueNotSupported spec.restartPolicy"}
	if got := registrytest.Causes(t, err); !slices.Equal(got, wantCauses) {
		t.Errorf("got causes %v, want %v", got, wantCauses)
	}
	if got := registrytest.Status(t, err).Message; !strings.HasPrefix(got, `Pod "bad" is invalid: [spec.containers[0].name: Invalid value: "App": a lowercase RFC 1123 label`) {
		t.Errorf("got message %q", got)
	}
}

func TestPodUpdateAndStatus(t *testing.T) {
	s := newStorage(t, nil)
	pod := create(t, s, newPod("web"))

	// Images may change (generation 2), the restart policy may not; the
	// status is ignored.
	changed := pod.DeepCopy()
	changed.Spec.Containers[0].Image = "nginx:1.26"
	changed.Status.Phase = corev1.PodRunning
	out, _, err := s.Pod.Update(podCtx(), "web", registrytest.Updated{Obj: changed}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(*corev1.Pod); got.Generation != 2 || got.Status.Phase != corev1.PodPending {
		t.Errorf("got generation %d phase %s, want 2 and the stored Pending", got.Generation, got.Status.Phase)
	}
	forbidden := out.(*corev1.Pod).DeepCopy()
	forbidden.Spec.RestartPolicy = corev1.RestartPolicyNever
	_, _, err = s.Pod.Update(podCtx(), "web", registrytest.Updated{Obj: forbidden}, nil, nil, false, &metav1.UpdateOptions{})
	if got := registrytest.Causes(t, err); !slices.Equal(got, []string{"FieldValueForbidden spec"}) {
		t.Errorf("got causes %v, want the immutable spec", got)
	}
	if !strings.Contains(registrytest.Status(t, err).Message, "pod updates may not change fields other than `spec.containers[*].image`") {
		t.Errorf("got message %q", registrytest.Status(t, err).Message)
	}

	// pods/status: the status and labels change, the spec does not, nor
	// the generation.
	cur := get(t, s, "web")
	st := cur.DeepCopy()
	st.Labels = map[string]string{"ready": "yes"}
	st.Spec.NodeName = "ignored"
	st.Status.Phase = corev1.PodRunning
	st.Status.PodIP, st.Status.PodIPs = "10.0.0.5", []corev1.PodIP{{IP: "10.0.0.5"}}
	st.Status.QOSClass = ""
	out, _, err = s.Status.Update(podCtx(), "web", registrytest.Updated{Obj: st}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.Status.Phase != corev1.PodRunning || got.Status.PodIP != "10.0.0.5" || got.Spec.NodeName != "" || got.Generation != 2 ||
		got.Labels["ready"] != "yes" || got.Status.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("status update: got %+v", got)
	}
	qos := got.DeepCopy()
	qos.Status.QOSClass = corev1.PodQOSGuaranteed
	_, _, err = s.Status.Update(podCtx(), "web", registrytest.Updated{Obj: qos}, nil, nil, false, &metav1.UpdateOptions{})
	if got := registrytest.Causes(t, err); !slices.Equal(got, []string{"FieldValueInvalid status.qosClass"}) {
		t.Errorf("got causes %v, want status.qosClass immutable", got)
	}
}

func TestPodBinding(t *testing.T) {
	s := newStorage(t, nil)
	create(t, s, newPod("web"))
	create(t, s, newPod("gated", func(p *corev1.Pod) {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	}))
	if err := bind(t, s, "web", "node-1"); err != nil {
		t.Fatal(err)
	}
	pod := get(t, s, "web")
	if pod.Spec.NodeName != "node-1" || len(pod.Status.Conditions) != 1 || pod.Status.Conditions[0].Type != corev1.PodScheduled ||
		pod.Status.Conditions[0].Status != corev1.ConditionTrue {
		t.Errorf("got node %q conditions %+v, want node-1 and PodScheduled=True", pod.Spec.NodeName, pod.Status.Conditions)
	}
	for _, c := range []struct {
		name, msg string
	}{
		{"web", `Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"`},
		{"gated", `Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates`},
	} {
		err := bind(t, s, c.name, "node-2")
		if st := registrytest.Status(t, err); st.Code != 409 || st.Message != c.msg {
			t.Errorf("bind %s: got %d %q, want 409 %q", c.name, st.Code, st.Message, c.msg)
		}
	}
	if err := bind(t, s, "missing", "node-1"); !apierrors.IsNotFound(err) {
		t.Errorf("bind a missing pod: got %v, want NotFound", err)
	}
	// The binding's name must be the pod's.
	ctx := podCtx()
	info, _ := requestInfo(ctx)
	info.Name = "web"
	_, err := s.Binding.Create(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Target: corev1.ObjectReference{Name: "n"}}, nil, &metav1.CreateOptions{})
	if st := registrytest.Status(t, err); st.Code != 400 || st.Message != "name in URL does not match name in Binding object" {
		t.Errorf("got %d %q", st.Code, st.Message)
	}
	// The bindings resource names the pod by the binding's name.
	legacy := NewLegacyBindingREST(s.Binding)
	if _, err := legacy.Create(podCtx(), &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "gated"}, Target: corev1.ObjectReference{Name: "n"}}, nil, &metav1.CreateOptions{}); err == nil ||
		!strings.Contains(err.Error(), "non-empty .spec.schedulingGates") {
		t.Errorf("legacy binding of a gated pod: got %v", err)
	}
}

func TestPodGracefulDelete(t *testing.T) {
	s := newStorage(t, nil)
	del := func(name string, opts *metav1.DeleteOptions) (*corev1.Pod, bool) {
		t.Helper()
		out, deleted, err := s.Pod.Delete(podCtx(), name, nil, opts)
		if err != nil {
			t.Fatalf("delete %s: %v", name, err)
		}
		return out.(*corev1.Pod), deleted
	}
	// Not scheduled: deleted at once (and the deleted pod is returned).
	create(t, s, newPod("pending"))
	if pod, deleted := del("pending", &metav1.DeleteOptions{}); !deleted || pod.Name != "pending" {
		t.Errorf("unscheduled pod: got deleted=%v, want deleted at once", deleted)
	}
	// Scheduled: marked with its 30s grace period, and stays.
	create(t, s, newPod("running"))
	if err := bind(t, s, "running", "node-1"); err != nil {
		t.Fatal(err)
	}
	pod, deleted := del("running", &metav1.DeleteOptions{})
	if deleted || pod.DeletionTimestamp == nil || ptr.Deref(pod.DeletionGracePeriodSeconds, -1) != 30 {
		t.Errorf("scheduled pod: got deleted=%v timestamp=%v grace=%v, want marked with 30s", deleted, pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds)
	}
	if got := get(t, s, "running"); got.DeletionTimestamp == nil {
		t.Error("the marked pod is gone or unmarked")
	}
	// A shorter grace period; then zero deletes it.
	if pod, deleted := del("running", metav1.NewDeleteOptions(5)); deleted || ptr.Deref(pod.DeletionGracePeriodSeconds, -1) != 5 {
		t.Errorf("shortened: got deleted=%v grace=%v, want 5s", deleted, pod.DeletionGracePeriodSeconds)
	}
	if _, deleted := del("running", metav1.NewDeleteOptions(0)); !deleted {
		t.Error("grace period 0: not deleted")
	}
	// A scheduled pod that has terminated is deleted at once.
	create(t, s, newPod("done"))
	if err := bind(t, s, "done", "node-1"); err != nil {
		t.Fatal(err)
	}
	done := get(t, s, "done")
	done.Status.Phase = corev1.PodSucceeded
	if _, _, err := s.Status.Update(podCtx(), "done", registrytest.Updated{Obj: done}, nil, nil, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, deleted := del("done", &metav1.DeleteOptions{}); !deleted {
		t.Error("succeeded pod: not deleted at once")
	}
}

func TestPodEphemeralContainersAndResize(t *testing.T) {
	s := newStorage(t, nil)
	create(t, s, newPod("web"))
	cur := get(t, s, "web")
	upd := cur.DeepCopy()
	upd.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		TerminationMessagePath: corev1.TerminationMessagePathDefault,
	}}}
	upd.Spec.Containers[0].Image = "ignored:1" // only ephemeral containers change here
	out, _, err := s.EphemeralContainers.Update(podCtx(), "web", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if len(got.Spec.EphemeralContainers) != 1 || got.Spec.Containers[0].Image != "nginx:1.25" || got.Generation != 2 {
		t.Errorf("got ephemeral %d image %s generation %d, want 1, the old image, 2", len(got.Spec.EphemeralContainers), got.Spec.Containers[0].Image, got.Generation)
	}
	// Removing it is forbidden.
	rm := got.DeepCopy()
	rm.Spec.EphemeralContainers = nil
	_, _, err = s.EphemeralContainers.Update(podCtx(), "web", registrytest.Updated{Obj: rm}, nil, nil, false, &metav1.UpdateOptions{})
	if got := registrytest.Causes(t, err); !slices.Equal(got, []string{"FieldValueForbidden spec.ephemeralContainers"}) {
		t.Errorf("got causes %v", got)
	}

	// Resize: cpu changes, the image does not.
	rs := get(t, s, "web").DeepCopy()
	rs.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse("200m")
	rs.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
	rs.Spec.Containers[0].Image = "ignored:2"
	out, _, err = s.Resize.Update(podCtx(), "web", registrytest.Updated{Obj: rs}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got = out.(*corev1.Pod)
	if q := got.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; q.String() != "200m" || got.Spec.Containers[0].Image != "nginx:1.25" || got.Generation != 3 {
		t.Errorf("resize: got cpu %s image %s generation %d", q.String(), got.Spec.Containers[0].Image, got.Generation)
	}
}

func TestPodFieldSelectors(t *testing.T) {
	s := newStorage(t, nil)
	create(t, s, newPod("a"))
	create(t, s, newPod("b", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }))
	if err := bind(t, s, "a", "node-1"); err != nil {
		t.Fatal(err)
	}
	names := func(selector string) []string {
		t.Helper()
		label, value, err := FieldLabelConversion(strings.SplitN(selector, "=", 2)[0], strings.SplitN(selector, "=", 2)[1])
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Pod.List(podCtx(), &metainternalversion.ListOptions{FieldSelector: fields.OneTermEqualSelector(label, value)})
		if err != nil {
			t.Fatalf("list %s: %v", selector, err)
		}
		var ns []string
		for _, p := range out.(*corev1.PodList).Items {
			ns = append(ns, p.Name)
		}
		return ns
	}
	for _, c := range []struct {
		selector string
		want     []string
	}{
		{"spec.nodeName=node-1", []string{"a"}},
		{"spec.host=node-1", []string{"a"}},
		{"spec.nodeName=", []string{"b"}},
		{"spec.restartPolicy=Never", []string{"b"}},
		{"spec.schedulerName=default-scheduler", []string{"a", "b"}},
		{"status.phase=Pending", []string{"a", "b"}},
		{"spec.hostNetwork=false", []string{"a", "b"}},
		{"status.podIP=", []string{"a", "b"}},
		{"status.nominatedNodeName=x", nil},
		{"spec.serviceAccountName=", []string{"a", "b"}},
	} {
		if got := names(c.selector); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.selector, got, c.want)
		}
	}
	if _, _, err := FieldLabelConversion("spec.containers", "x"); err == nil || err.Error() != "field label not supported: spec.containers" {
		t.Errorf("got %v, want kube's unsupported field label error", err)
	}
}

var _ runtime.Object = (*corev1.Pod)(nil)

// v1.37's pod strategy with PodLevelResourcesFixDefaulting: an update that
// drops the pod-level resources keeps the stored ones; a resize completes
// the stored pod-level resources from the resized containers.
func TestPodLevelResourcesOnUpdateAndResize(t *testing.T) {
	res := func(cpu string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	old := &corev1.Pod{Spec: corev1.PodSpec{
		Resources:  &corev1.ResourceRequirements{Requests: res("1")},
		Containers: []corev1.Container{{Name: "c", Image: "x", Resources: corev1.ResourceRequirements{Limits: res("2"), Requests: res("1")}}},
	}}
	upd := old.DeepCopy()
	upd.Spec.Resources = nil
	Strategy.PrepareForUpdate(t.Context(), upd, old)
	if upd.Spec.Resources == nil || !upd.Spec.Resources.Requests.Cpu().Equal(resource.MustParse("1")) {
		t.Errorf("update without pod-level resources: got %+v, want the stored ones", upd.Spec.Resources)
	}

	resized := old.DeepCopy()
	resized.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: res("4"), Requests: res("1")}
	ResizeStrategy.PrepareForUpdate(t.Context(), resized, old)
	if l := resized.Spec.Resources.Limits; l == nil || !l.Cpu().Equal(resource.MustParse("4")) {
		t.Errorf("resize: pod-level limits %v, want cpu 4 from the resized container", l)
	}

	// InPlacePodLevelResourcesVerticalScaling (on in v1.37): the pod-level
	// resources sent are kept; a resize without them keeps the stored ones.
	podLevel := old.DeepCopy()
	podLevel.Spec.Resources.Requests = res("3")
	ResizeStrategy.PrepareForUpdate(t.Context(), podLevel, old)
	if r := podLevel.Spec.Resources.Requests; !r.Cpu().Equal(resource.MustParse("3")) {
		t.Errorf("resize of pod-level resources: requests %v, want cpu 3", r)
	}
	without := old.DeepCopy()
	without.Spec.Resources = nil
	ResizeStrategy.PrepareForUpdate(t.Context(), without, old)
	if without.Spec.Resources == nil || !without.Spec.Resources.Requests.Cpu().Equal(resource.MustParse("1")) {
		t.Errorf("resize without pod-level resources: got %+v, want the stored ones", without.Spec.Resources)
	}
}
