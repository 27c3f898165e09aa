package batch

import (
	"encoding/json"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// FuzzValidateBatch decodes arbitrary JSON as a Job and as a CronJob,
// defaults them as the server does, and validates them new, updated and
// (Jobs) with a new status: errors, never a panic, whatever the spec (a
// nil selector, an Indexed Job without completions, index lists and
// schedules of any shape).
func FuzzValidateBatch(f *testing.F) {
	f.Add([]byte(`{"spec":{"completionMode":"Indexed","successPolicy":{"rules":[{"succeededIndexes":"0-3,x","succeededCount":2}]}}}`))
	f.Add([]byte(`{"spec":{"schedule":"TZ=","timeZone":"../x","jobTemplate":{"spec":{"podFailurePolicy":{"rules":[{}]}}}}}`))
	f.Add([]byte(`{"spec":{"completions":3,"completionMode":"Indexed","backoffLimitPerIndex":1},"status":{"completedIndexes":"0-1,1","failedIndexes":"1-2,5-","conditions":[{"type":"Complete","status":"True"}]}}`))
	f.Add([]byte(`{"spec":{"schedule":"@every 1m","jobTemplate":{"spec":{"selector":{"matchExpressions":[{"key":"","operator":"In"}]}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		job := &batchv1.Job{}
		if json.Unmarshal(data, job) == nil {
			scheme.Scheme.Default(job)
			old := job.DeepCopy()
			opts := Options{RequirePrefixedLabels: true, AllowElasticIndexedJobs: true}
			_ = ValidateJob(job, opts)
			_ = ValidateJobUpdate(job, old, opts)
			_ = ValidateJobStatusUpdate(job, &batchv1.Job{}, StatusOptionsFor(job, &batchv1.Job{}))
			_ = ValidateJobStatusUpdate(&batchv1.Job{}, job, StatusOptionsFor(&batchv1.Job{}, job))
		}
		cj := &batchv1.CronJob{}
		if json.Unmarshal(data, cj) == nil {
			scheme.Scheme.Default(cj)
			_ = ValidateCronJob(cj, Options{})
			_ = ValidateCronJobUpdate(cj, cj.DeepCopy(), Options{})
		}
	})
}
