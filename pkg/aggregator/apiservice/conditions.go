package apiservice

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// Reasons and messages of the Available condition, as kube-aggregator
// writes them.
const (
	ReasonLocal  = "Local"
	MessageLocal = "Local APIServices are always available"
)

// Name returns the name an APIService for gv must have: "<version>.<group>"
// ("v1." for the legacy group).
func Name(gv schema.GroupVersion) string {
	return gv.Version + "." + gv.Group
}

// IsLocal reports whether svc is served by the chain itself (no service).
func IsLocal(svc *apiregistrationv1.APIService) bool {
	return svc.Spec.Service == nil
}

// LocalAvailableCondition is the condition of every local APIService.
func LocalAvailableCondition(now metav1.Time) apiregistrationv1.APIServiceCondition {
	return apiregistrationv1.APIServiceCondition{
		Type:               apiregistrationv1.Available,
		Status:             apiregistrationv1.ConditionTrue,
		LastTransitionTime: now,
		Reason:             ReasonLocal,
		Message:            MessageLocal,
	}
}

// Condition returns svc's condition of type t, or nil.
func Condition(svc *apiregistrationv1.APIService, t apiregistrationv1.APIServiceConditionType) *apiregistrationv1.APIServiceCondition {
	for i := range svc.Status.Conditions {
		if svc.Status.Conditions[i].Type == t {
			return &svc.Status.Conditions[i]
		}
	}
	return nil
}

// IsAvailable reports whether svc's Available condition is True.
func IsAvailable(svc *apiregistrationv1.APIService) bool {
	c := Condition(svc, apiregistrationv1.Available)
	return c != nil && c.Status == apiregistrationv1.ConditionTrue
}

// SetCondition sets c on svc: a new condition is appended; an existing
// one takes c's reason and message, and c's status and
// lastTransitionTime only if the status changes.
func SetCondition(svc *apiregistrationv1.APIService, c apiregistrationv1.APIServiceCondition) {
	old := Condition(svc, c.Type)
	if old == nil {
		svc.Status.Conditions = append(svc.Status.Conditions, c)
		return
	}
	if old.Status != c.Status {
		old.Status = c.Status
		old.LastTransitionTime = c.LastTransitionTime
	}
	old.Reason = c.Reason
	old.Message = c.Message
}
