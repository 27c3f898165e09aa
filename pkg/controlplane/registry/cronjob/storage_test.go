package cronjob

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
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

func newCronJob(name string) *batchv1.CronJob {
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.CronJobSpec{
			Schedule: "*/5 * * * *",
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers:    []corev1.Container{{Name: "hello", Image: "busybox:1.28"}},
			}}}},
		},
	}
	scheme.Scheme.Default(cj)
	return cj
}

func TestCronJobStore(t *testing.T) {
	store, status, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("batch", "v1", "cronjobs", "ns")
	if got := store.ShortNames(); len(got) != 1 || got[0] != "cj" {
		t.Errorf("short names %v", got)
	}
	in := newCronJob("hello")
	in.Status.Active = []corev1.ObjectReference{{Name: "x"}}
	obj, err := store.Create(ctx, in, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cj := obj.(*batchv1.CronJob)
	if len(cj.Status.Active) != 0 || cj.Generation != 1 {
		t.Errorf("status %+v generation %d", cj.Status, cj.Generation)
	}
	upd := cj.DeepCopy()
	upd.Spec.Suspend = ptr.To(true)
	obj, _, err = store.Update(ctx, "hello", registrytest.Updated{Obj: upd}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*batchv1.CronJob).Generation; got != 2 {
		t.Errorf("generation %d after a spec change", got)
	}
	now := metav1.Now()
	obj, _, err = status.Update(ctx, "hello", registrytest.Mutated{Mutate: func(o runtime.Object) {
		o.(*batchv1.CronJob).Status.LastScheduleTime = &now
	}}, nil, nil, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if obj.(*batchv1.CronJob).Status.LastScheduleTime == nil {
		t.Error("status not written through /status")
	}
	bad := newCronJob("bad")
	bad.Spec.Schedule = "not a schedule"
	_, err = store.Create(ctx, bad, nil, &metav1.CreateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueInvalid spec.schedule" {
		t.Errorf("bad schedule: %s", got)
	}
	// A TZ in the schedule warns on update of a stored one.
	warnings := Strategy.WarningsOnUpdate(ctx, &batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "TZ=UTC * * * * *"}}, &batchv1.CronJob{})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "cannot use TZ or CRON_TZ in spec.spec.schedule") {
		t.Errorf("warnings %v", warnings)
	}
}

func TestCronJobTable(t *testing.T) {
	cj := newCronJob("hello")
	cj.CreationTimestamp = metav1.NewTime(time.Now().Add(-10 * time.Minute))
	last := metav1.NewTime(time.Now().Add(-3 * time.Minute))
	cj.Status.LastScheduleTime = &last
	cj.Status.Active = []corev1.ObjectReference{{Name: "a"}, {Name: "b"}}
	cj.Spec.TimeZone = ptr.To("Etc/UTC")
	tbl, err := TableConvertor.ConvertToTable(context.Background(), cj, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	// Upstream's printers.go cronJobColumnDefinitions.
	if got := strings.Join(names, ","); got != "Name,Schedule,Timezone,Suspend,Active,Last Schedule,Age,Containers,Images,Selector" {
		t.Errorf("columns %s", got)
	}
	want := []any{"hello", "*/5 * * * *", "Etc/UTC", "False", int64(2), "3m", "10m", "hello", "busybox:1.28", "<none>"}
	for i, w := range want {
		if tbl.Rows[0].Cells[i] != w {
			t.Errorf("cell %s = %#v, want %#v", names[i], tbl.Rows[0].Cells[i], w)
		}
	}
}

// TestCronJobPodTemplateValidated: the job template's pod template is
// checked by core's pod template validation.
func TestCronJobPodTemplateValidated(t *testing.T) {
	store, _, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("batch", "v1", "cronjobs", "ns")
	cj := newCronJob("tmpl")
	cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Image = ""
	_, err = store.Create(ctx, cj, nil, &metav1.CreateOptions{})
	if got := strings.Join(registrytest.Causes(t, err), ","); got != "FieldValueRequired spec.jobTemplate.spec.template.spec.containers[0].image" {
		t.Errorf("causes %s", got)
	}
}
