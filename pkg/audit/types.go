package audit

import (
	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Level says how much of a request is recorded.
type Level string

// Audit levels, least to most detail (audit.k8s.io/v1).
const (
	LevelNone            Level = "None"
	LevelMetadata        Level = "Metadata"
	LevelRequest         Level = "Request"
	LevelRequestResponse Level = "RequestResponse"
)

var levelOrder = map[Level]int{
	LevelNone:            0,
	LevelMetadata:        1,
	LevelRequest:         2,
	LevelRequestResponse: 3,
}

// Less reports whether l records less than o. Unknown levels count as None.
func (l Level) Less(o Level) bool { return levelOrder[l] < levelOrder[o] }

// Stage is the point of request handling an Event was produced at.
type Stage string

// Audit stages (audit.k8s.io/v1).
const (
	StageRequestReceived  Stage = "RequestReceived"
	StageResponseStarted  Stage = "ResponseStarted"
	StageResponseComplete Stage = "ResponseComplete"
	StagePanic            Stage = "Panic"
)

// API group, version and kind of Event on the wire.
const (
	GroupVersion = "audit.k8s.io/v1"
	EventKind    = "Event"
)

// HeaderAuditID is the request and response header that carries the audit ID.
const HeaderAuditID = "Audit-ID"

// Event is an audit.k8s.io/v1 Event. The JSON field names and omitempty
// choices are those of upstream's v1 type, so tools that read kube-apiserver
// audit logs read ours. Request bodies are recorded at Request level and
// above, response bodies at RequestResponse (see LogRequestObject,
// LogResponseObject).
type Event struct {
	metav1.TypeMeta `json:",inline"`

	Level            Level             `json:"level"`
	AuditID          types.UID         `json:"auditID"`
	Stage            Stage             `json:"stage"`
	RequestURI       string            `json:"requestURI"`
	Verb             string            `json:"verb"`
	User             authnv1.UserInfo  `json:"user"`
	ImpersonatedUser *authnv1.UserInfo `json:"impersonatedUser,omitempty"`
	// AuthenticationMetadata says how the request was authenticated:
	// set only when constrained impersonation allowed ImpersonatedUser.
	AuthenticationMetadata   *AuthenticationMetadata `json:"authenticationMetadata,omitempty"`
	SourceIPs                []string                `json:"sourceIPs,omitempty"`
	UserAgent                string                  `json:"userAgent,omitempty"`
	ObjectRef                *ObjectReference        `json:"objectRef,omitempty"`
	ResponseStatus           *metav1.Status          `json:"responseStatus,omitempty"`
	RequestObject            *runtime.Unknown        `json:"requestObject,omitempty"`
	ResponseObject           *runtime.Unknown        `json:"responseObject,omitempty"`
	RequestReceivedTimestamp metav1.MicroTime        `json:"requestReceivedTimestamp"`
	StageTimestamp           metav1.MicroTime        `json:"stageTimestamp"`
	Annotations              map[string]string       `json:"annotations,omitempty"`
}

// ObjectReference names the object a resource request is about.
type ObjectReference struct {
	Resource        string    `json:"resource,omitempty"`
	Namespace       string    `json:"namespace,omitempty"`
	Name            string    `json:"name,omitempty"`
	UID             types.UID `json:"uid,omitempty"`
	APIGroup        string    `json:"apiGroup,omitempty"`
	APIVersion      string    `json:"apiVersion,omitempty"`
	ResourceVersion string    `json:"resourceVersion,omitempty"`
	Subresource     string    `json:"subresource,omitempty"`
}

// Policy is how one request is audited (upstream's RequestAuditConfig):
// its level, the stages left out, and whether managedFields are dropped
// from the request and response objects. A Policy is also a
// PolicyEvaluator that gives itself to every request.
type Policy struct {
	Level             Level
	OmitStages        []Stage
	OmitManagedFields bool
}

// MetadataPolicy records every request at Metadata level with one
// ResponseComplete event (plus ResponseStarted for long-running requests and
// Panic on a panic); RequestReceived is omitted.
func MetadataPolicy() Policy {
	return Policy{Level: LevelMetadata, OmitStages: []Stage{StageRequestReceived}}
}

// Omits reports whether p leaves stage s out.
func (p Policy) Omits(s Stage) bool {
	for _, o := range p.OmitStages {
		if o == s {
			return true
		}
	}
	return false
}

// AuthenticationMetadata is audit.k8s.io/v1's: how a request was
// authenticated.
type AuthenticationMetadata struct {
	// ImpersonationConstraint is the verb of the constrained impersonation
	// mode that allowed the impersonation (impersonate:user-info,
	// impersonate:serviceaccount, ...); empty for legacy impersonation.
	ImpersonationConstraint string `json:"impersonationConstraint,omitempty"`
}
