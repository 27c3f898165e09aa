package batch

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/controlplane/validation/declarative"
)

// maxCronJobNameLength: the CronJob controller names its Jobs
// <cronjob>-<11-character timestamp>, which must fit a 63-character
// label.
const maxCronJobNameLength = utilvalidation.DNS1035LabelMaxLength - 11

// ValidateCronJob checks a new CronJob, its metadata included.
func ValidateCronJob(cj *batchv1.CronJob, opts Options) field.ErrorList {
	allErrs := validation.ValidateObjectMeta(&cj.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)
	return append(allErrs, validateCronJobCreate(cj, opts)...)
}

// ValidateCronJobFields checks a new CronJob but for the generic metadata
// rules.
func ValidateCronJobFields(cj *batchv1.CronJob, opts Options) field.ErrorList {
	allErrs := validation.ValidateKubeFinalizerNames(cj.Finalizers, metadataPath.Child("finalizers"))
	return append(allErrs, validateCronJobCreate(cj, opts)...)
}

func validateCronJobCreate(cj *batchv1.CronJob, opts Options) field.ErrorList {
	allErrs := validateCronJobSpec(&cj.Spec, nil, specPath, opts)
	if len(cj.Name) > maxCronJobNameLength {
		allErrs = append(allErrs, field.Invalid(metadataPath.Child("name"), cj.Name, fmt.Sprintf("must be no more than %d characters", maxCronJobNameLength)))
	}
	return allErrs
}

// ValidateCronJobUpdate checks an update of a CronJob, its metadata
// included.
func ValidateCronJobUpdate(cj, old *batchv1.CronJob, opts Options) field.ErrorList {
	allErrs := validation.ValidateObjectMetaUpdate(&cj.ObjectMeta, &old.ObjectMeta, metadataPath)
	return append(allErrs, validateCronJobSpec(&cj.Spec, &old.Spec, specPath, opts)...)
}

// ValidateCronJobUpdateFields checks an update of a CronJob but for the
// generic metadata rules. The name length limit of create is not
// enforced: CronJobs stored with longer names stay updatable.
func ValidateCronJobUpdateFields(cj, old *batchv1.CronJob, opts Options) field.ErrorList {
	allErrs := validation.ValidateKubeFinalizerNames(cj.Finalizers, metadataPath.Child("finalizers"))
	return append(allErrs, validateCronJobSpec(&cj.Spec, &old.Spec, specPath, opts)...)
}

func validateCronJobSpec(spec, old *batchv1.CronJobSpec, fldPath *field.Path, opts Options) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Schedule == "" {
		// Upstream's +k8s:required (beta) on CronJobSpec.schedule.
		allErrs = append(allErrs, declarative.Required(fldPath.Child("schedule")))
	} else {
		// A schedule stored with TZ= stays updatable.
		allowTZ := old != nil && strings.Contains(old.Schedule, "TZ")
		allErrs = append(allErrs, validateSchedule(spec.Schedule, allowTZ, spec.TimeZone, fldPath.Child("schedule"))...)
	}
	if spec.StartingDeadlineSeconds != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(*spec.StartingDeadlineSeconds, fldPath.Child("startingDeadlineSeconds"))...)
	}
	if old == nil || !ptr.Equal(old.TimeZone, spec.TimeZone) {
		allErrs = append(allErrs, validateTimeZone(spec.TimeZone, fldPath.Child("timeZone"))...)
	}
	allErrs = append(allErrs, validateConcurrencyPolicy(spec.ConcurrencyPolicy, fldPath.Child("concurrencyPolicy"))...)
	var oldTemplate *batchv1.JobTemplateSpec
	if old != nil {
		oldTemplate = &old.JobTemplate
	}
	allErrs = append(allErrs, validateJobTemplateSpec(&spec.JobTemplate, oldTemplate, fldPath.Child("jobTemplate"), opts)...)
	if spec.SuccessfulJobsHistoryLimit != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*spec.SuccessfulJobsHistoryLimit), fldPath.Child("successfulJobsHistoryLimit"))...)
	}
	if spec.FailedJobsHistoryLimit != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*spec.FailedJobsHistoryLimit), fldPath.Child("failedJobsHistoryLimit"))...)
	}
	return allErrs
}

func validateConcurrencyPolicy(policy batchv1.ConcurrencyPolicy, fldPath *field.Path) field.ErrorList {
	switch policy {
	case batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent:
		return nil
	case "":
		return field.ErrorList{field.Required(fldPath, "")}
	}
	return field.ErrorList{field.NotSupported(fldPath, policy,
		[]batchv1.ConcurrencyPolicy{batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent})}
}

// validateSchedule parses the schedule as the CronJob controller does
// (robfig/cron's standard parser: five fields or a descriptor such as
// @hourly) and refuses TZ= or CRON_TZ= prefixes, which the timeZone field
// replaces.
func validateSchedule(schedule string, allowTZ bool, timeZone *string, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if _, err := parseStandard(schedule); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, schedule, err.Error()))
	}
	hasTZ := strings.Contains(schedule, "TZ")
	switch {
	case allowTZ && hasTZ && timeZone != nil:
		allErrs = append(allErrs, field.Invalid(fldPath, schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
	case !allowTZ && hasTZ:
		allErrs = append(allErrs, field.Invalid(fldPath, schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	return allErrs
}

// parseStandard is cron.ParseStandard, whose parser panics on some
// malformed input (e.g. a lone "TZ=" prefix): a panic is a parse error.
func parseStandard(schedule string) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("failed to parse schedule: %v", r)
		}
	}()
	return cron.ParseStandard(schedule)
}

// validTimeZoneCharacters is one component of an IANA zone name
// (https://data.iana.org/time-zones/theory.html#naming): ASCII letters,
// '.', '-', '_', and the digits and '+' of legacy names, 1 to 14 of them.
//
// Compiled on first use, not at package initialisation (which every
// process start pays for).
var validTimeZoneCharacters = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`) })

func validateTimeZone(timeZone *string, fldPath *field.Path) field.ErrorList {
	if timeZone == nil {
		return nil
	}
	tz := *timeZone
	if tz == "" {
		return field.ErrorList{field.Invalid(fldPath, timeZone, "timeZone must be nil or non-empty string")}
	}
	for part := range strings.SplitSeq(tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !validTimeZoneCharacters().MatchString(part) {
			return field.ErrorList{field.Invalid(fldPath, timeZone, fmt.Sprintf("unknown time zone %s", tz))}
		}
	}
	var allErrs field.ErrorList
	if strings.EqualFold(tz, "Local") {
		allErrs = append(allErrs, field.Invalid(fldPath, timeZone, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"))
	}
	if _, err := time.LoadLocation(tz); err != nil {
		allErrs = append(allErrs, field.Invalid(fldPath, timeZone, err.Error()))
	}
	return allErrs
}

// validateJobTemplateSpec checks a CronJob's job template: the job spec
// (not its selector, which the controller generates for each Job).
func validateJobTemplateSpec(spec, old *batchv1.JobTemplateSpec, fldPath *field.Path, opts Options) field.ErrorList {
	var oldSpec *batchv1.JobSpec
	if old != nil {
		oldSpec = &old.Spec
	}
	specPath := fldPath.Child("spec")
	allErrs := validateJobSpec(&spec.Spec, oldSpec, specPath, opts)
	if spec.Spec.Selector != nil {
		allErrs = append(allErrs, field.Invalid(specPath.Child("selector"), spec.Spec.Selector, "`selector` will be auto-generated"))
	}
	if ptr.Deref(spec.Spec.ManualSelector, false) {
		allErrs = append(allErrs, field.NotSupported(specPath.Child("manualSelector"), spec.Spec.ManualSelector, []string{"nil", "false"}))
	}
	return allErrs
}
