package audit

import (
	"encoding/json"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEventJSON(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{
			name: "full metadata event",
			ev: Event{
				TypeMeta:   metav1.TypeMeta{Kind: EventKind, APIVersion: GroupVersion},
				Level:      LevelMetadata,
				AuditID:    "abc",
				Stage:      StageResponseComplete,
				RequestURI: "/api/v1/namespaces/ns/pods/p?x=1",
				Verb:       "get",
				User: authnv1.UserInfo{
					Username: "alice", UID: "u1", Groups: []string{"g1"},
					Extra: map[string]authnv1.ExtraValue{"k": {"v"}},
				},
				SourceIPs: []string{"10.0.0.1"},
				UserAgent: "kubectl/v1",
				ObjectRef: &ObjectReference{
					Resource: "pods", Namespace: "ns", Name: "p", APIGroup: "", APIVersion: "v1", Subresource: "log",
				},
				ResponseStatus:           &metav1.Status{Code: 200},
				RequestReceivedTimestamp: metav1.NewMicroTime(ts),
				StageTimestamp:           metav1.NewMicroTime(ts),
				Annotations:              map[string]string{"authorization.k8s.io/decision": "allow"},
			},
			want: `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"abc","stage":"ResponseComplete",` +
				`"requestURI":"/api/v1/namespaces/ns/pods/p?x=1","verb":"get",` +
				`"user":{"username":"alice","uid":"u1","groups":["g1"],"extra":{"k":["v"]}},` +
				`"sourceIPs":["10.0.0.1"],"userAgent":"kubectl/v1",` +
				`"objectRef":{"resource":"pods","namespace":"ns","name":"p","apiVersion":"v1","subresource":"log"},` +
				`"responseStatus":{"metadata":{},"code":200},` +
				`"requestReceivedTimestamp":"2026-01-02T03:04:05.123456Z","stageTimestamp":"2026-01-02T03:04:05.123456Z",` +
				`"annotations":{"authorization.k8s.io/decision":"allow"}}`,
		},
		{
			name: "empty optional fields are omitted",
			ev:   Event{Level: LevelMetadata, Stage: StageResponseStarted},
			want: `{"level":"Metadata","auditID":"","stage":"ResponseStarted","requestURI":"","verb":"","user":{},` +
				`"requestReceivedTimestamp":null,"stageTimestamp":null}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(&tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestLevelLess(t *testing.T) {
	tests := []struct {
		a, b Level
		want bool
	}{
		{LevelNone, LevelMetadata, true},
		{LevelMetadata, LevelMetadata, false},
		{LevelRequestResponse, LevelRequest, false},
		{"bogus", LevelMetadata, true},
	}
	for _, tt := range tests {
		if got := tt.a.Less(tt.b); got != tt.want {
			t.Errorf("%q.Less(%q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
