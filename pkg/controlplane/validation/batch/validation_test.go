package batch

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// The expected errors of these tables are upstream's (kubernetes/kubernetes
// v1.37 pkg/apis/batch/validation/validation.go): "<type> <field>: <detail>".

func errStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s: %s", string(e.Type), e.Field, e.Detail))
	}
	return out
}

// validJob is a Job as the strategy leaves it on create: defaulted, with
// the generated selector and labels.
func validJob() *batchv1.Job {
	uid := "8d3ff1e0-0000-4000-8000-000000000001"
	labels := map[string]string{
		"controller-uid": uid, "job-name": "pi",
		batchv1.ControllerUidLabel: uid, batchv1.JobNameLabel: "pi",
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "pi", Namespace: "ns", UID: "8d3ff1e0-0000-4000-8000-000000000001", ResourceVersion: "1"},
		Spec: batchv1.JobSpec{
			Parallelism:          ptr.To[int32](1),
			Completions:          ptr.To[int32](1),
			BackoffLimit:         ptr.To[int32](6),
			CompletionMode:       ptr.To(batchv1.NonIndexedCompletion),
			Suspend:              ptr.To(false),
			ManualSelector:       ptr.To(false),
			PodReplacementPolicy: ptr.To(batchv1.TerminatingOrFailed),
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{batchv1.ControllerUidLabel: uid}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "pi", Image: "perl"}},
				},
			},
		},
	}
}

func createOptions() Options {
	return Options{RequirePrefixedLabels: true, AllowElasticIndexedJobs: true}
}

func TestValidateJob(t *testing.T) {
	if errs := ValidateJob(validJob(), createOptions()); len(errs) != 0 {
		t.Fatalf("valid job: %v", errs)
	}
	tests := []struct {
		name   string
		mutate func(*batchv1.Job)
		want   []string
	}{
		{"restartPolicy Always", func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
			[]string{`FieldValueRequired spec.template.spec.restartPolicy: valid values: "OnFailure", "Never"`}},
		{"restartPolicy unsupported", func(j *batchv1.Job) { j.Spec.Template.Spec.RestartPolicy = "Sometimes" },
			[]string{`FieldValueNotSupported spec.template.spec.restartPolicy: supported values: "OnFailure", "Never"`}},
		{"negative counts", func(j *batchv1.Job) {
			j.Spec.Parallelism, j.Spec.Completions, j.Spec.BackoffLimit = ptr.To[int32](-1), ptr.To[int32](-1), ptr.To[int32](-1)
			j.Spec.ActiveDeadlineSeconds, j.Spec.TTLSecondsAfterFinished = ptr.To[int64](-1), ptr.To[int32](-1)
		}, []string{
			"FieldValueInvalid spec.parallelism: must be greater than or equal to 0",
			"FieldValueInvalid spec.completions: must be greater than or equal to 0",
			"FieldValueInvalid spec.activeDeadlineSeconds: must be greater than or equal to 0",
			"FieldValueInvalid spec.backoffLimit: must be greater than or equal to 0",
			"FieldValueInvalid spec.ttlSecondsAfterFinished: must be greater than or equal to 0",
		}},
		{"manual selector missing", func(j *batchv1.Job) { j.Spec.ManualSelector = ptr.To(true); j.Spec.Selector = nil },
			// A nil selector selects nothing: it does not match the template
			// either (upstream reports both).
			[]string{"FieldValueRequired spec.selector: ", "FieldValueInvalid spec.template.metadata.labels: `selector` does not match template `labels`"}},
		{"manual selector not matching the template", func(j *batchv1.Job) {
			j.Spec.ManualSelector = ptr.To(true)
			j.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
		}, []string{"FieldValueInvalid spec.template.metadata.labels: `selector` does not match template `labels`"}},
		{"generated label overridden", func(j *batchv1.Job) { j.Spec.Template.Labels["controller-uid"] = "wrong" },
			[]string{
				"FieldValueInvalid spec.template.metadata.labels[controller-uid]: must be '8d3ff1e0-0000-4000-8000-000000000001'",
			}},
		{"generated labels missing", func(j *batchv1.Job) { delete(j.Spec.Template.Labels, batchv1.JobNameLabel) },
			[]string{"FieldValueRequired spec.template.metadata.labels[batch.kubernetes.io/job-name]: pi"}},
		{"completionMode unsupported", func(j *batchv1.Job) { j.Spec.CompletionMode = ptr.To[batchv1.CompletionMode]("Sorted") },
			[]string{`FieldValueNotSupported spec.completionMode: supported values: "NonIndexed", "Indexed"`}},
		{"Indexed without completions", func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			j.Spec.Completions = nil
		}, []string{"FieldValueRequired spec.completions: when completion mode is Indexed"}},
		{"per-index limits of a NonIndexed job", func(j *batchv1.Job) {
			j.Spec.BackoffLimitPerIndex, j.Spec.MaxFailedIndexes = ptr.To[int32](1), ptr.To[int32](1)
		}, []string{
			"FieldValueInvalid spec.backoffLimitPerIndex: requires indexed completion mode",
			"FieldValueInvalid spec.maxFailedIndexes: requires indexed completion mode",
		}},
		{"maxFailedIndexes alone", func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			j.Spec.MaxFailedIndexes = ptr.To[int32](1)
		}, []string{"FieldValueRequired spec.backoffLimitPerIndex: when maxFailedIndexes is specified"}},
		{"podFailurePolicy with restartPolicy OnFailure", func(j *batchv1.Job) {
			j.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
				Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{1}},
			}}}
		}, []string{`FieldValueInvalid spec.template.spec.restartPolicy: only "Never" is supported when podFailurePolicy is specified`}},
		{"podFailurePolicy rules", func(j *batchv1.Job) {
			j.Spec.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
			j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
				{Action: "", OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: ptr.To("nope"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{3, 0, 3}}},
				{Action: batchv1.PodFailurePolicyActionIgnore},
				{Action: batchv1.PodFailurePolicyActionFailIndex, OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget", Status: "Maybe"}}},
			}}
		}, []string{
			`FieldValueRequired spec.podFailurePolicy.rules[0].action: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]`,
			"FieldValueInvalid spec.podFailurePolicy.rules[0].onExitCodes.containerName: must be one of the container or initContainer names in the pod template",
			"FieldValueInvalid spec.podFailurePolicy.rules[0].onExitCodes.values[1]: must not be 0 for the In operator",
			"FieldValueDuplicate spec.podFailurePolicy.rules[0].onExitCodes.values[2]: ",
			"FieldValueInvalid spec.podFailurePolicy.rules[0].onExitCodes.values: must be ordered",
			"FieldValueInvalid spec.podFailurePolicy.rules[1]: specifying one of OnExitCodes and OnPodConditions is required",
			"FieldValueInvalid spec.podFailurePolicy.rules[2].action: requires the backoffLimitPerIndex to be set",
			`FieldValueNotSupported spec.podFailurePolicy.rules[2].onPodConditions[0].status: supported values: "False", "True", "Unknown"`,
			`FieldValueNotSupported spec.podReplacementPolicy: supported values: "Failed"`,
		}},
		{"podReplacementPolicy unsupported", func(j *batchv1.Job) { j.Spec.PodReplacementPolicy = ptr.To[batchv1.PodReplacementPolicy]("Never") },
			[]string{`FieldValueNotSupported spec.podReplacementPolicy: supported values: "Failed", "TerminatingOrFailed"`}},
		{"successPolicy of a NonIndexed job", func(j *batchv1.Job) {
			j.Spec.SuccessPolicy = &batchv1.SuccessPolicy{Rules: []batchv1.SuccessPolicyRule{{SucceededCount: ptr.To[int32](1)}}}
		}, []string{"FieldValueInvalid spec.successPolicy: requires indexed completion mode"}},
		{"Indexed job name too long for its pods' hostnames", func(j *batchv1.Job) {
			name := strings.Repeat("a", 62)
			j.Name = name
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
			j.Spec.Completions = ptr.To[int32](10)
			for _, k := range []string{"job-name", batchv1.JobNameLabel} {
				j.Spec.Template.Labels[k] = name
			}
		}, []string{"FieldValueInvalid metadata.name: will not able to create pod with invalid DNS label: " + strings.Repeat("a", 62) + "-9"}},
		{"managedBy not a domain-prefixed path", func(j *batchv1.Job) { j.Spec.ManagedBy = ptr.To("controller") },
			[]string{"FieldValueInvalid spec.managedBy: must be a domain-prefixed path (such as \"acme.io/foo\")"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob()
			tc.mutate(j)
			if diff := cmp.Diff(tc.want, errStrings(ValidateJob(j, createOptions()))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateJobUpdate(t *testing.T) {
	old := validJob()
	old.ResourceVersion = "1"
	tests := []struct {
		name   string
		opts   Options
		mutate func(*batchv1.Job)
		want   []string
	}{
		{"parallelism may change", createOptions(), func(j *batchv1.Job) { j.Spec.Parallelism = ptr.To[int32](3) }, nil},
		{"selector is immutable", createOptions(), func(j *batchv1.Job) {
			j.Spec.Selector.MatchLabels["extra"] = "x"
			j.Spec.Template.Labels["extra"] = "x"
		}, []string{
			// Only a create checks the generated selector: kube-apiserver
			// v1.37.2 answered such an update with the immutable errors alone.
			"FieldValueInvalid spec.selector: field is immutable",
			"FieldValueInvalid spec.template: field is immutable",
		}},
		{"template is immutable", createOptions(), func(j *batchv1.Job) { j.Spec.Template.Spec.Containers[0].Image = "perl:2" },
			[]string{"FieldValueInvalid spec.template: field is immutable"}},
		{"scheduling directives of a suspended job that never ran", Options{RequirePrefixedLabels: true, AllowMutableSchedulingDirectives: true}, func(j *batchv1.Job) {
			j.Spec.Template.Spec.NodeSelector = map[string]string{"zone": "a"}
			j.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
		}, nil},
		{"completions of a NonIndexed job", createOptions(), func(j *batchv1.Job) { j.Spec.Completions = ptr.To[int32](2) },
			[]string{"FieldValueInvalid spec.completions: field is immutable"}},
		{"completionMode and backoffLimitPerIndex are immutable", createOptions(), func(j *batchv1.Job) {
			j.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
		}, []string{"FieldValueInvalid spec.completionMode: field is immutable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := old.DeepCopy()
			tc.mutate(j)
			// Spec errors would be reported twice (as upstream's strategy
			// validates the spec in both ValidateJob and ValidateJobUpdate);
			// these cases have none.
			if diff := cmp.Diff(tc.want, errStrings(ValidateJobUpdate(j, old, tc.opts))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	// Elastic Indexed Jobs: completions changes with parallelism only.
	indexed := validJob()
	indexed.Spec.CompletionMode = ptr.To(batchv1.IndexedCompletion)
	indexed.Spec.Completions, indexed.Spec.Parallelism = ptr.To[int32](3), ptr.To[int32](3)
	scaled := indexed.DeepCopy()
	scaled.Spec.Completions, scaled.Spec.Parallelism = ptr.To[int32](5), ptr.To[int32](5)
	if errs := ValidateJobUpdate(scaled, indexed, createOptions()); len(errs) != 0 {
		t.Errorf("scaling an Indexed job in tandem: %v", errs)
	}
	scaled.Spec.Parallelism = ptr.To[int32](4)
	want := []string{"FieldValueInvalid spec.completions: can only be modified in tandem with spec.parallelism"}
	if diff := cmp.Diff(want, errStrings(ValidateJobUpdate(scaled, indexed, createOptions()))); diff != "" {
		t.Errorf("completions without parallelism (-want +got):\n%s", diff)
	}
}

func TestValidateJobStatusUpdate(t *testing.T) {
	now := metav1.Now()
	earlier := metav1.NewTime(now.Add(-60e9))
	old := validJob()
	old.Status = batchv1.JobStatus{StartTime: &earlier, Active: 1, Ready: ptr.To[int32](1)}
	cond := func(t batchv1.JobConditionType) batchv1.JobCondition {
		return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue}
	}
	tests := []struct {
		name   string
		mutate func(*batchv1.Job)
		want   []string
	}{
		{"complete", func(j *batchv1.Job) {
			j.Status.Active, j.Status.Ready, j.Status.Succeeded = 0, ptr.To[int32](0), 1
			j.Status.CompletionTime = &now
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet), cond(batchv1.JobComplete)}
		}, nil},
		{"complete without completionTime or SuccessCriteriaMet, with active pods", func(j *batchv1.Job) {
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobComplete)}
		}, []string{
			"FieldValueRequired status.completionTime: completionTime is required for Complete jobs",
			"FieldValueInvalid status.conditions: cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
			"FieldValueInvalid status.active: active>0 is invalid for finished job",
		}},
		{"failed without FailureTarget", func(j *batchv1.Job) {
			j.Status.Active, j.Status.Ready = 0, ptr.To[int32](0)
			j.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailed)}
		}, []string{"FieldValueInvalid status.conditions: cannot set Failed=True condition without the FailureTarget=true condition"}},
		{"negative and inconsistent counts", func(j *batchv1.Job) {
			j.Status.Succeeded, j.Status.Ready = -1, ptr.To[int32](2)
		}, []string{
			"FieldValueInvalid status.succeeded: must be greater than or equal to 0",
			"FieldValueInvalid status.ready: cannot set more ready pods than active",
			"FieldValueInvalid status.succeeded: cannot decrease the succeeded counter",
		}},
		{"completedIndexes of a NonIndexed job", func(j *batchv1.Job) { j.Status.CompletedIndexes = "0" },
			[]string{"FieldValueInvalid status.completedIndexes: cannot set non-empty completedIndexes when non-indexed completion mode"}},
		{"startTime removed", func(j *batchv1.Job) { j.Status.StartTime = nil },
			[]string{"FieldValueRequired status.startTime: startTime cannot be removed for unsuspended job"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := old.DeepCopy()
			tc.mutate(j)
			if diff := cmp.Diff(tc.want, errStrings(ValidateJobStatusUpdate(j, old, StatusOptionsFor(j, old)))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	// A terminal condition stays; counters do not go down.
	done := old.DeepCopy()
	done.Status.Failed = 2
	done.Status.Active, done.Status.Ready = 0, ptr.To[int32](0)
	done.Status.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget), cond(batchv1.JobFailed)}
	back := done.DeepCopy()
	back.Status.Failed = 1
	back.Status.Conditions = nil
	want := []string{
		"FieldValueInvalid status.conditions: cannot disable the terminal Failed=True condition",
		"FieldValueInvalid status.conditions: cannot disable the terminal FailureTarget=True condition",
		"FieldValueInvalid status.failed: cannot decrease the failed counter",
	}
	if diff := cmp.Diff(want, errStrings(ValidateJobStatusUpdate(back, done, StatusOptionsFor(back, done)))); diff != "" {
		t.Errorf("undoing a failure (-want +got):\n%s", diff)
	}
}

func validCronJob() *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "ns"},
		Spec: batchv1.CronJobSpec{
			Schedule:          "*/5 * * * *",
			ConcurrencyPolicy: batchv1.AllowConcurrent,
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyOnFailure, Containers: []corev1.Container{{Name: "hello", Image: "busybox"}}},
			}}},
		},
	}
}

func TestValidateCronJob(t *testing.T) {
	if errs := ValidateCronJob(validCronJob(), Options{}); len(errs) != 0 {
		t.Fatalf("valid cronjob: %v", errs)
	}
	for _, s := range []string{"@hourly", "0 0 1 1 *", "*/15 9-17 * * MON-FRI", "@every 1h"} {
		cj := validCronJob()
		cj.Spec.Schedule = s
		if errs := ValidateCronJob(cj, Options{}); len(errs) != 0 {
			t.Errorf("schedule %q: %v", s, errs)
		}
	}
	tests := []struct {
		name   string
		mutate func(*batchv1.CronJob)
		want   []string
	}{
		{"schedule missing", func(c *batchv1.CronJob) { c.Spec.Schedule = "" }, []string{"FieldValueRequired spec.schedule: "}},
		{"schedule unparseable", func(c *batchv1.CronJob) { c.Spec.Schedule = "every minute" },
			[]string{"FieldValueInvalid spec.schedule: expected exactly 5 fields, found 2: [every minute]"}},
		{"schedule out of range", func(c *batchv1.CronJob) { c.Spec.Schedule = "61 * * * *" },
			[]string{"FieldValueInvalid spec.schedule: end of range (61) above maximum (59): 61"}},
		{"TZ in schedule", func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=UTC 0 0 * * *" },
			[]string{"FieldValueInvalid spec.schedule: cannot use TZ or CRON_TZ in schedule, use timeZone field instead"}},
		{"lone TZ= (robfig/cron panics on it)", func(c *batchv1.CronJob) { c.Spec.Schedule = "TZ=0" },
			[]string{
				"FieldValueInvalid spec.schedule: failed to parse schedule: runtime error: slice bounds out of range [:-1]",
				"FieldValueInvalid spec.schedule: cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
			}},
		{"unknown timeZone", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("Mars/Olympus") },
			[]string{"FieldValueInvalid spec.timeZone: unknown time zone Mars/Olympus"}},
		{"empty timeZone", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("") },
			[]string{"FieldValueInvalid spec.timeZone: timeZone must be nil or non-empty string"}},
		{"Local timeZone", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("Local") },
			[]string{"FieldValueInvalid spec.timeZone: timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"}},
		{"timeZone with a path component", func(c *batchv1.CronJob) { c.Spec.TimeZone = ptr.To("../etc/passwd") },
			[]string{"FieldValueInvalid spec.timeZone: unknown time zone ../etc/passwd"}},
		{"concurrencyPolicy", func(c *batchv1.CronJob) { c.Spec.ConcurrencyPolicy = "Sometimes" },
			[]string{`FieldValueNotSupported spec.concurrencyPolicy: supported values: "Allow", "Forbid", "Replace"`}},
		{"job template restartPolicy Always", func(c *batchv1.CronJob) {
			c.Spec.JobTemplate.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
		},
			[]string{`FieldValueRequired spec.jobTemplate.spec.template.spec.restartPolicy: valid values: "OnFailure", "Never"`}},
		{"job template selector and manualSelector", func(c *batchv1.CronJob) {
			c.Spec.JobTemplate.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
			c.Spec.JobTemplate.Spec.ManualSelector = ptr.To(true)
		}, []string{
			"FieldValueInvalid spec.jobTemplate.spec.selector: `selector` will be auto-generated",
			`FieldValueNotSupported spec.jobTemplate.spec.manualSelector: supported values: "nil", "false"`,
		}},
		{"negative limits", func(c *batchv1.CronJob) {
			c.Spec.StartingDeadlineSeconds = ptr.To[int64](-1)
			c.Spec.SuccessfulJobsHistoryLimit, c.Spec.FailedJobsHistoryLimit = ptr.To[int32](-1), ptr.To[int32](-2)
		}, []string{
			"FieldValueInvalid spec.startingDeadlineSeconds: must be greater than or equal to 0",
			"FieldValueInvalid spec.successfulJobsHistoryLimit: must be greater than or equal to 0",
			"FieldValueInvalid spec.failedJobsHistoryLimit: must be greater than or equal to 0",
		}},
		{"name over 52 characters", func(c *batchv1.CronJob) { c.Name = strings.Repeat("c", 53) },
			[]string{"FieldValueInvalid metadata.name: must be no more than 52 characters"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cj := validCronJob()
			tc.mutate(cj)
			if diff := cmp.Diff(tc.want, errStrings(ValidateCronJob(cj, Options{}))); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
	// Update: a stored TZ= schedule stays updatable, the 52-character
	// limit is not re-checked.
	old := validCronJob()
	old.Name = strings.Repeat("c", 60)
	old.ResourceVersion = "1"
	old.Spec.Schedule = "TZ=UTC 0 0 * * *"
	updated := old.DeepCopy()
	updated.Spec.Suspend = ptr.To(true)
	if errs := ValidateCronJobUpdate(updated, old, Options{}); len(errs) != 0 {
		t.Errorf("update of a stored TZ schedule: %v", errs)
	}
	updated.Spec.TimeZone = ptr.To("UTC")
	want := []string{"FieldValueInvalid spec.schedule: cannot use both timeZone field and TZ or CRON_TZ in schedule"}
	if diff := cmp.Diff(want, errStrings(ValidateCronJobUpdate(updated, old, Options{}))); diff != "" {
		t.Errorf("TZ and timeZone (-want +got):\n%s", diff)
	}
}
