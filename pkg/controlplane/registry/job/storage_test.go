package job

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func newJob(name string) *batchv1.Job {
	j := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers:    []corev1.Container{{Name: "pi", Image: "perl:5.34.0"}},
		}}},
	}
	scheme.Scheme.Default(j) // as the handler's decoding does
	return j
}

func TestJobCreateGeneratesSelector(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("batch", "v1", "jobs", "ns")
	in := newJob("pi")
	in.Status.Active = 3 // a client cannot create status
	obj, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job := obj.(*batchv1.Job)
	uid := string(job.UID)
	for k, v := range map[string]string{"controller-uid": uid, "job-name": "pi", batchv1.ControllerUidLabel: uid, batchv1.JobNameLabel: "pi"} {
		if job.Spec.Template.Labels[k] != v {
			t.Errorf("template label %s=%q, want %q", k, job.Spec.Template.Labels[k], v)
		}
	}
	if got := job.Spec.Selector.MatchLabels; len(got) != 1 || got[batchv1.ControllerUidLabel] != uid {
		t.Errorf("selector %v, want batch.kubernetes.io/controller-uid=%s", got, uid)
	}
	// Stored objects are read back defaulted: the Job gets its template's
	// labels, as a Job created without labels does in kube.
	if job.Labels[batchv1.JobNameLabel] != "pi" {
		t.Errorf("job labels %v, want the template's", job.Labels)
	}
	if job.Status.Active != 0 || job.Generation != 1 {
		t.Errorf("status %+v generation %d, want empty status and generation 1", job.Status, job.Generation)
	}

	// Spec changes bump the generation; the main resource ignores status.
	upd := job.DeepCopy()
	upd.Spec.Parallelism = ptr.To[int32](2)
	upd.Status.Succeeded = 1
	obj, _, err = store.Update(ctx, "pi", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job = obj.(*batchv1.Job)
	if job.Generation != 2 || job.Status.Succeeded != 0 {
		t.Errorf("generation %d succeeded %d, want 2 and 0", job.Generation, job.Status.Succeeded)
	}

	// The template is immutable.
	bad := job.DeepCopy()
	bad.Spec.Template.Spec.Containers[0].Image = "perl:6"
	_, _, err = store.Update(ctx, "pi", registrytest.Updated{Obj: bad}, nil, nil, false, &metav1.UpdateOptions{})
	if got := registrytest.Causes(t, err); strings.Join(got, ",") != "FieldValueInvalid spec.template" {
		t.Errorf("template change: got causes %v", got)
	}

	// Status through /status: checked with upstream's status rules, spec
	// untouched, generation kept.
	now := metav1.Now()
	obj, _, err = status.Update(ctx, "pi", registrytest.Mutated{Mutate: func(o runtime.Object) {
		j := o.(*batchv1.Job)
		j.Status.StartTime = &now
		j.Status.Active = 1
		j.Spec.Parallelism = ptr.To[int32](9)
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	job = obj.(*batchv1.Job)
	if job.Status.Active != 1 || *job.Spec.Parallelism != 2 || job.Generation != 2 {
		t.Errorf("after /status: active %d parallelism %d generation %d", job.Status.Active, *job.Spec.Parallelism, job.Generation)
	}
	_, _, err = status.Update(ctx, "pi", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*batchv1.Job).Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue}}
	}}, nil, nil, false, &metav1.UpdateOptions{})
	got := strings.Join(registrytest.Causes(t, err), ",")
	if !strings.Contains(got, "FieldValueInvalid status.conditions") || !strings.Contains(got, "FieldValueInvalid status.active") {
		t.Errorf("Failed without FailureTarget, with active pods: got causes %s", got)
	}
}

func TestJobManualSelector(t *testing.T) {
	store, _, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("batch", "v1", "jobs", "ns")
	j := newJob("manual")
	j.Spec.ManualSelector = ptr.To(true)
	j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	j.Spec.Template.Labels = map[string]string{"app": "x"}
	obj, err := store.Create(ctx, j, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*batchv1.Job).Spec.Template.Labels; len(got) != 1 {
		t.Errorf("manual selector: template labels %v, want only app=x", got)
	}
	// Without manualSelector a selector of one's own is not the generated one.
	j = newJob("custom")
	j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	j.Spec.Template.Labels = map[string]string{"app": "x"}
	_, err = store.Create(ctx, j, nil, &metav1.CreateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid spec.selector" {
		t.Errorf("custom selector without manualSelector: got %s", got)
	}
	// restartPolicy Always is refused with upstream's cause.
	j = newJob("always")
	j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	_, err = store.Create(ctx, j, nil, &metav1.CreateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueRequired spec.template.spec.restartPolicy" {
		t.Errorf("restartPolicy Always: got %s", got)
	}
}

func TestJobGarbageCollectionPolicy(t *testing.T) {
	v1 := registrytest.Context("batch", "v1", "jobs", "ns")
	if got := Strategy.DefaultGarbageCollectionPolicy(v1); got != generic.OrphanDependents {
		t.Errorf("batch/v1: %s, want OrphanDependents (upstream's compatibility default)", got)
	}
	if got := Strategy.DefaultGarbageCollectionPolicy(context.Background()); got != generic.DeleteDependents {
		t.Errorf("no request: %s, want DeleteDependents", got)
	}
}

func TestJobFieldLabels(t *testing.T) {
	j := newJob("a")
	j.Namespace = "ns"
	j.Status.Succeeded = 3
	_, fs, err := GetAttrs(j)
	if err != nil {
		t.Fatal(err)
	}
	if fs["status.successful"] != "3" || fs["metadata.name"] != "a" || fs["metadata.namespace"] != "ns" {
		t.Errorf("fields %v", fs)
	}
	if _, _, err := FieldLabelConversion("status.active", "1"); err == nil || err.Error() != `field label "status.active" not supported for Job` {
		t.Errorf("unsupported label: %v", err)
	}
}

// since90s marks a cell that is a duration of about 90 seconds.
const since90s = "<about 90s>"

func TestJobTable(t *testing.T) {
	start := metav1.NewTime(time.Now().Add(-90 * time.Second))
	end := metav1.NewTime(start.Add(30 * time.Second))
	job := func(mutate func(*batchv1.Job)) *batchv1.Job {
		j := newJob("pi")
		j.CreationTimestamp = metav1.NewTime(time.Now().Add(-2 * time.Minute))
		j.Spec.Template.Spec.Containers = append(j.Spec.Template.Spec.Containers, corev1.Container{Name: "side", Image: "busybox"})
		j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
		mutate(j)
		return j
	}
	tests := []struct {
		name string
		job  *batchv1.Job
		want []any
	}{
		{"running", job(func(j *batchv1.Job) { j.Status.StartTime = &start }),
			[]any{"pi", "Running", "0/1", since90s, "2m", "pi,side", "perl:5.34.0,busybox", "a=b"}},
		{"complete", job(func(j *batchv1.Job) {
			j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &start, &end, 1
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}
		}), []any{"pi", "Complete", "1/1", "30s", "2m", "pi,side", "perl:5.34.0,busybox", "a=b"}},
		{"work queue", job(func(j *batchv1.Job) { j.Spec.Completions, j.Spec.Parallelism = nil, ptr.To[int32](3) }),
			[]any{"pi", "Running", "0/1 of 3", "", "2m", "pi,side", "perl:5.34.0,busybox", "a=b"}},
		{"suspended", job(func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{{Type: batchv1.JobSuspended, Status: corev1.ConditionTrue}}
		}), []any{"pi", "Suspended", "0/1", "", "2m", "pi,side", "perl:5.34.0,busybox", "a=b"}},
		{"terminating", job(func(j *batchv1.Job) { j.DeletionTimestamp = &end }),
			[]any{"pi", "Terminating", "0/1", "", "2m", "pi,side", "perl:5.34.0,busybox", "a=b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tbl, err := TableConvertor.ConvertToTable(context.Background(), tc.job, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range tbl.ColumnDefinitions {
				names = append(names, c.Name)
			}
			// Upstream's printers.go jobColumnDefinitions (wide ones priority 1).
			if got := strings.Join(names, ","); got != "Name,Status,Completions,Duration,Age,Containers,Images,Selector" {
				t.Errorf("columns %s", got)
			}
			if tbl.ColumnDefinitions[5].Priority != 1 || tbl.ColumnDefinitions[4].Priority != 0 {
				t.Error("wide columns must have priority 1")
			}
			for i, want := range tc.want {
				if want == since90s {
					// A running Job's duration runs with the clock.
					if d, _ := tbl.Rows[0].Cells[i].(string); d != "90s" && d != "91s" && d != "92s" {
						t.Errorf("duration %q, want about 90s", d)
					}
					continue
				}
				if tbl.Rows[0].Cells[i] != want {
					t.Errorf("cell %d (%s) = %#v, want %#v", i, names[i], tbl.Rows[0].Cells[i], want)
				}
			}
		})
	}
}

// TestJobPodTemplateValidated: the template is checked by core's pod
// template validation, at the Job's paths.
func TestJobPodTemplateValidated(t *testing.T) {
	store, _, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("batch", "v1", "jobs", "ns")
	j := newJob("tmpl")
	j.Spec.Template.Spec.Containers = append(j.Spec.Template.Spec.Containers, corev1.Container{Name: "Bad_Name"})
	scheme.Scheme.Default(j)
	_, err = store.Create(ctx, j, nil, &metav1.CreateOptions{})
	causes := strings.Join(registrytest.Causes(t, err), ",")
	for _, want := range []string{"FieldValueInvalid spec.template.spec.containers[1].name", "FieldValueRequired spec.template.spec.containers[1].image"} {
		if !strings.Contains(causes, want) {
			t.Errorf("causes %s lack %s", causes, want)
		}
	}
}

// A dry-run create answers the Job a real create would (read back from
// storage, defaulted): metadata.labels copied from the generated template
// labels. Upstream's dry run passes its result through the storage codec
// (k8s.io/apiserver v0.37 registry/generic/registry/dryrun.go copyInto);
// checked against kube-apiserver v1.37.2 with `kubectl create job j1
// --image=busybox --dry-run=server -o yaml` (session 20): labels
// batch.kubernetes.io/controller-uid, batch.kubernetes.io/job-name,
// controller-uid and job-name.
func TestJobDryRunCreateDefaultedAsRead(t *testing.T) {
	store, _, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("batch", "v1", "jobs", "ns")
	obj, err := store.Create(ctx, newJob("dry"), nil, &metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	job := obj.(*batchv1.Job)
	uid := string(job.UID)
	want := map[string]string{"controller-uid": uid, "job-name": "dry", batchv1.ControllerUidLabel: uid, batchv1.JobNameLabel: "dry"}
	if len(job.Labels) != len(want) {
		t.Fatalf("dry-run Job labels %v, want %v", job.Labels, want)
	}
	for k, v := range want {
		if job.Labels[k] != v {
			t.Errorf("dry-run Job label %s=%q, want %q", k, job.Labels[k], v)
		}
	}
	if _, err := store.Get(ctx, "dry", &metav1.GetOptions{}); err == nil {
		t.Error("the dry-run Job was stored")
	}
}
