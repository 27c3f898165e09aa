package cronjob

import (
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/job"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Upstream's printer takes the descriptions of the schedule, time zone,
// suspend, active and lastScheduleTime columns from batch/v1beta1's
// types.
var (
	specDoc   = batchv1beta1.CronJobSpec{}.SwaggerDoc()
	statusDoc = batchv1beta1.CronJobStatus{}.SwaggerDoc()
)

// TableConvertor renders CronJobs as kubectl shows them: NAME SCHEDULE
// TIMEZONE SUSPEND ACTIVE LAST SCHEDULE AGE, and CONTAINERS IMAGES
// SELECTOR with -o wide.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Schedule", Type: "string", Description: specDoc["schedule"]},
		{Name: "Timezone", Type: "string", Description: specDoc["timeZone"]},
		{Name: "Suspend", Type: "boolean", Description: specDoc["suspend"]},
		{Name: "Active", Type: "integer", Description: statusDoc["active"]},
		{Name: "Last Schedule", Type: "string", Description: statusDoc["lastScheduleTime"]},
		table.AgeColumn,
		{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."},
		{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."},
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		cj, ok := obj.(*batchv1.CronJob)
		if !ok {
			return nil, false
		}
		last := "<none>"
		if cj.Status.LastScheduleTime != nil {
			last = table.Since(*cj.Status.LastScheduleTime)
		}
		tz := "<none>"
		if cj.Spec.TimeZone != nil {
			tz = *cj.Spec.TimeZone
		}
		// Upstream's printBoolPtr: "<unset>" for nil.
		suspend := "<unset>"
		if cj.Spec.Suspend != nil {
			suspend = "False"
			if *cj.Spec.Suspend {
				suspend = "True"
			}
		}
		tmpl := &cj.Spec.JobTemplate.Spec
		names, images := job.ContainerCells(tmpl.Template.Spec.Containers)
		return []any{cj.Name, cj.Spec.Schedule, tz, suspend, int64(len(cj.Status.Active)), last,
			table.Since(cj.CreationTimestamp), names, images, metav1.FormatLabelSelector(tmpl.Selector)}, true
	},
}
