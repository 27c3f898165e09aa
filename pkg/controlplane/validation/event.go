package validation

import (
	"fmt"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	eventsv1beta1 "k8s.io/api/events/v1beta1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Length limits of events.k8s.io events.
const (
	ReportingInstanceLengthLimit = 128
	ActionLengthLimit            = 128
	ReasonLengthLimit            = 128
	NoteLengthLimit              = 1024
)

// isLegacyEventVersion reports whether requests in gv get only the legacy
// event validation: core/v1 and events.k8s.io/v1beta1, for backwards
// compatibility. Everything else (events.k8s.io/v1, and a request of
// unknown version) gets the strict one.
func isLegacyEventVersion(gv schema.GroupVersion) bool {
	return gv == corev1.SchemeGroupVersion || gv == eventsv1beta1.SchemeGroupVersion
}

// ValidateEventCreate checks a new event (stored as a core/v1 Event)
// created through requestVersion, as upstream: the legacy rules always;
// for events.k8s.io/v1 also the metadata (name a DNS-1123 subdomain),
// eventTime required, type Normal or Warning, the deprecated fields
// (firstTimestamp, lastTimestamp, count, source) unset and a valid series.
func ValidateEventCreate(event *corev1.Event, requestVersion schema.GroupVersion) field.ErrorList {
	allErrs := ValidateLegacyEvent(event)
	if isLegacyEventVersion(requestVersion) {
		return allErrs
	}
	allErrs = append(allErrs, ValidateObjectMeta(&event.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, metadataPath)...)
	return append(allErrs, validateStrictEvent(event)...)
}

// ValidateEventCreateFields is ValidateEventCreate but for the generic
// metadata rules, which the store checks with path-segment names (core
// events may have any name usable in a path). For strict versions the
// name must still be a DNS-1123 subdomain, checked here.
func ValidateEventCreateFields(event *corev1.Event, requestVersion schema.GroupVersion) field.ErrorList {
	allErrs := ValidateLegacyEvent(event)
	if isLegacyEventVersion(requestVersion) {
		return allErrs
	}
	if event.Name != "" {
		for _, msg := range apimachineryvalidation.NameIsDNSSubdomain(event.Name, false) {
			allErrs = append(allErrs, field.Invalid(metadataPath.Child("name"), event.Name, msg))
		}
	}
	allErrs = append(allErrs, ValidateKubeFinalizerNames(event.Finalizers, metadataPath.Child("finalizers"))...)
	return append(allErrs, validateStrictEvent(event)...)
}

func validateStrictEvent(event *corev1.Event) field.ErrorList {
	allErrs := validateEventSeries(event)
	if event.EventTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("eventTime"), ""))
	}
	if event.Type != corev1.EventTypeNormal && event.Type != corev1.EventTypeWarning {
		allErrs = append(allErrs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", event.Type)))
	}
	if !event.FirstTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("firstTimestamp"), "", "needs to be unset"))
	}
	if !event.LastTimestamp.IsZero() {
		allErrs = append(allErrs, field.Invalid(field.NewPath("lastTimestamp"), "", "needs to be unset"))
	}
	if event.Count != 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("count"), "", "needs to be unset"))
	}
	if event.Source.Component != "" || event.Source.Host != "" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("source"), "", "needs to be unset"))
	}
	return allErrs
}

// ValidateEventUpdate checks an update of an event through
// requestVersion: the new event passes the legacy rules; for
// events.k8s.io/v1 also the metadata update rules, a changed series is
// valid, and everything but the series and metadata is immutable.
func ValidateEventUpdate(newEvent, oldEvent *corev1.Event, requestVersion schema.GroupVersion) field.ErrorList {
	allErrs := ValidateLegacyEvent(newEvent)
	if isLegacyEventVersion(requestVersion) {
		return allErrs
	}
	allErrs = append(allErrs, ValidateObjectMetaUpdate(&newEvent.ObjectMeta, &oldEvent.ObjectMeta, metadataPath)...)
	return append(allErrs, validateStrictEventUpdate(newEvent, oldEvent)...)
}

// ValidateEventUpdateFields is ValidateEventUpdate but for the generic
// metadata rules.
func ValidateEventUpdateFields(newEvent, oldEvent *corev1.Event, requestVersion schema.GroupVersion) field.ErrorList {
	allErrs := ValidateLegacyEvent(newEvent)
	if isLegacyEventVersion(requestVersion) {
		return allErrs
	}
	allErrs = append(allErrs, ValidateKubeFinalizerNames(newEvent.Finalizers, metadataPath.Child("finalizers"))...)
	return append(allErrs, validateStrictEventUpdate(newEvent, oldEvent)...)
}

func validateStrictEventUpdate(newEvent, oldEvent *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	if !reflect.DeepEqual(newEvent.Series, oldEvent.Series) {
		allErrs = append(allErrs, validateEventSeries(newEvent)...)
	}
	immutable := []struct {
		path     string
		new, old any
	}{
		{"involvedObject", newEvent.InvolvedObject, oldEvent.InvolvedObject},
		{"reason", newEvent.Reason, oldEvent.Reason},
		{"message", newEvent.Message, oldEvent.Message},
		{"source", newEvent.Source, oldEvent.Source},
		{"firstTimestamp", newEvent.FirstTimestamp, oldEvent.FirstTimestamp},
		{"lastTimestamp", newEvent.LastTimestamp, oldEvent.LastTimestamp},
		{"count", newEvent.Count, oldEvent.Count},
		// Upstream checks reason twice.
		{"reason", newEvent.Reason, oldEvent.Reason},
		{"type", newEvent.Type, oldEvent.Type},
		{"eventTime", newEvent.EventTime, oldEvent.EventTime},
		{"action", newEvent.Action, oldEvent.Action},
		{"related", newEvent.Related, oldEvent.Related},
		{"reportingController", newEvent.ReportingController, oldEvent.ReportingController},
		{"reportingInstance", newEvent.ReportingInstance, oldEvent.ReportingInstance},
	}
	for _, f := range immutable {
		allErrs = append(allErrs, ValidateImmutableField(f.new, f.old, field.NewPath(f.path))...)
	}
	return allErrs
}

func validateEventSeries(event *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	if event.Series == nil {
		return allErrs
	}
	if event.Series.Count < 2 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("series.count"), "", "should be at least 2"))
	}
	if event.Series.LastObservedTime.IsZero() {
		allErrs = append(allErrs, field.Required(field.NewPath("series.lastObservedTime"), ""))
	}
	return allErrs
}

// ValidateLegacyEvent is the validation every event passes, whatever the
// request's version. An event without eventTime (an old-style event) must
// have involvedObject.namespace equal to its namespace (or, with no
// involvedObject.namespace, be in "default" or no namespace). An event
// with eventTime must have involvedObject.namespace unless it is in
// "default" or "kube-system", and reportingController (a qualified name),
// reportingInstance, action and reason, with bounded lengths. The
// namespace is a DNS-1123 subdomain.
func ValidateLegacyEvent(event *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	involvedNS := field.NewPath("involvedObject", "namespace")
	if event.EventTime.IsZero() {
		if event.InvolvedObject.Namespace == "" {
			// For old clients, "default" is accepted too.
			if event.Namespace != metav1.NamespaceNone && event.Namespace != metav1.NamespaceDefault {
				allErrs = append(allErrs, field.Invalid(involvedNS, event.InvolvedObject.Namespace, "does not match event.namespace"))
			}
		} else if event.Namespace != event.InvolvedObject.Namespace {
			allErrs = append(allErrs, field.Invalid(involvedNS, event.InvolvedObject.Namespace, "does not match event.namespace"))
		}
	} else {
		if event.InvolvedObject.Namespace == "" && event.Namespace != metav1.NamespaceDefault && event.Namespace != metav1.NamespaceSystem {
			allErrs = append(allErrs, field.Invalid(involvedNS, event.InvolvedObject.Namespace, "does not match event.namespace"))
		}
		allErrs = append(allErrs, validateReporting(event)...)
	}
	for _, msg := range validation.IsDNS1123Subdomain(event.Namespace) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("namespace"), event.Namespace, msg))
	}
	return allErrs
}

// validateReporting checks the fields a new-style event must carry.
func validateReporting(event *corev1.Event) field.ErrorList {
	var allErrs field.ErrorList
	rc := field.NewPath("reportingController")
	if event.ReportingController == "" {
		allErrs = append(allErrs, field.Required(rc, ""))
	}
	for _, msg := range validation.IsQualifiedName(event.ReportingController) {
		allErrs = append(allErrs, field.Invalid(rc, event.ReportingController, msg))
	}
	allErrs = append(allErrs, requiredBounded(field.NewPath("reportingInstance"), event.ReportingInstance, ReportingInstanceLengthLimit)...)
	allErrs = append(allErrs, requiredBounded(field.NewPath("action"), event.Action, ActionLengthLimit)...)
	allErrs = append(allErrs, requiredBounded(field.NewPath("reason"), event.Reason, ReasonLengthLimit)...)
	if len(event.Message) > NoteLengthLimit {
		allErrs = append(allErrs, field.Invalid(field.NewPath("message"), "", fmt.Sprintf("can have at most %v characters", NoteLengthLimit)))
	}
	return allErrs
}

// requiredBounded requires a non-empty value of at most limit bytes.
func requiredBounded(p *field.Path, v string, limit int) field.ErrorList {
	var allErrs field.ErrorList
	if v == "" {
		allErrs = append(allErrs, field.Required(p, ""))
	}
	if len(v) > limit {
		allErrs = append(allErrs, field.Invalid(p, "", fmt.Sprintf("can have at most %v characters", limit)))
	}
	return allErrs
}
