package job

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Column descriptions of upstream's printers (pkg/printers/internalversion).
const (
	containersDescription = "Names of each container in the template."
	imagesDescription     = "Images referenced by each container in the template."
)

// TableConvertor renders Jobs as kubectl shows them: NAME STATUS
// COMPLETIONS DURATION AGE, and CONTAINERS IMAGES SELECTOR with -o wide.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Status", Type: "string", Description: "Status of the job."},
		{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
		{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		table.AgeColumn,
		{Name: "Containers", Type: "string", Priority: 1, Description: containersDescription},
		{Name: "Images", Type: "string", Priority: 1, Description: imagesDescription},
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		job, ok := obj.(*batchv1.Job)
		if !ok {
			return nil, false
		}
		names, images := ContainerCells(job.Spec.Template.Spec.Containers)
		return []any{job.Name, jobStatus(job), completions(job), jobDuration(job), table.Since(job.CreationTimestamp),
			names, images, metav1.FormatLabelSelector(job.Spec.Selector)}, true
	},
}

// completions is "<succeeded>/<completions>", or for a work queue (no
// completions) "<succeeded>/1", with " of <parallelism>" above 1.
func completions(job *batchv1.Job) string {
	if job.Spec.Completions != nil {
		return fmt.Sprintf("%d/%d", job.Status.Succeeded, *job.Spec.Completions)
	}
	if p := job.Spec.Parallelism; p != nil && *p > 1 {
		return fmt.Sprintf("%d/1 of %d", job.Status.Succeeded, *p)
	}
	return fmt.Sprintf("%d/1", job.Status.Succeeded)
}

// jobDuration is the time from start to completion (or to now), empty
// before the Job started.
func jobDuration(job *batchv1.Job) string {
	switch {
	case job.Status.StartTime == nil:
		return ""
	case job.Status.CompletionTime == nil:
		return duration.HumanDuration(time.Since(job.Status.StartTime.Time))
	}
	return duration.HumanDuration(job.Status.CompletionTime.Sub(job.Status.StartTime.Time))
}

// jobStatus is the first of Complete, Failed, Terminating, Suspended,
// FailureTarget that applies, else Running. As upstream's printer, a
// condition counts by its first occurrence.
func jobStatus(job *batchv1.Job) string {
	switch {
	case hasCondition(job.Status.Conditions, batchv1.JobComplete):
		return "Complete"
	case hasCondition(job.Status.Conditions, batchv1.JobFailed):
		return "Failed"
	case job.DeletionTimestamp != nil:
		return "Terminating"
	case hasCondition(job.Status.Conditions, batchv1.JobSuspended):
		return "Suspended"
	case hasCondition(job.Status.Conditions, batchv1.JobFailureTarget):
		return "FailureTarget"
	}
	return "Running"
}

func hasCondition(conditions []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	for _, c := range conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// ContainerCells are the CONTAINERS and IMAGES cells of a pod template:
// the names and images, comma-separated.
func ContainerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	im := make([]string, len(containers))
	for i, c := range containers {
		n[i], im[i] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(im, ",")
}
