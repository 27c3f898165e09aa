package audit

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// memBackend keeps events in memory (a real Backend, not a mock of one: it
// is the simplest backend there is).
type memBackend struct{ events []*Event }

func (m *memBackend) ProcessEvents(evs ...*Event) bool {
	m.events = append(m.events, evs...)
	return true
}
func (m *memBackend) Run(<-chan struct{}) error { return nil }
func (m *memBackend) Shutdown()                 {}

func TestContextEmit(t *testing.T) {
	tests := []struct {
		name       string
		policy     Policy
		stages     []Stage
		wantStages []Stage
	}{
		{"none level records nothing", Policy{Level: LevelNone}, []Stage{StageResponseComplete}, nil},
		{"metadata records each stage", Policy{Level: LevelMetadata}, []Stage{StageRequestReceived, StageResponseComplete},
			[]Stage{StageRequestReceived, StageResponseComplete}},
		{"omitted stages are skipped", MetadataPolicy(), []Stage{StageRequestReceived, StageResponseComplete},
			[]Stage{StageResponseComplete}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := WithContext(context.Background())
			AddAnnotation(ctx, "a", "1")
			AddAnnotation(ctx, "a", "2") // first wins
			b := &memBackend{}
			FromContext(ctx).Begin(&Event{AuditID: "id"}, tt.policy, b, nil)
			for _, s := range tt.stages {
				FromContext(ctx).Emit(s)
			}
			if len(b.events) != len(tt.wantStages) {
				t.Fatalf("got %d events, want %d", len(b.events), len(tt.wantStages))
			}
			for i, ev := range b.events {
				if ev.Stage != tt.wantStages[i] {
					t.Errorf("event %d: got stage %q, want %q", i, ev.Stage, tt.wantStages[i])
				}
				if ev.Kind != EventKind || ev.APIVersion != GroupVersion {
					t.Errorf("event %d: got %s/%s, want %s/%s", i, ev.APIVersion, ev.Kind, GroupVersion, EventKind)
				}
				if got := ev.Annotations["a"]; got != "1" {
					t.Errorf("event %d: got annotation %q, want %q", i, got, "1")
				}
			}
		})
	}
}

func TestContextSnapshotsAreIndependent(t *testing.T) {
	ctx := WithContext(context.Background())
	b := &memBackend{}
	ac := FromContext(ctx)
	ac.Begin(&Event{}, Policy{Level: LevelMetadata}, b, nil)
	ac.SetResponseCode(200)
	ac.Emit(StageResponseStarted)
	LogResponseStatus(ctx, &metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden, Message: "no"})
	AddAnnotation(ctx, "late", "x")
	ac.Emit(StageResponseComplete)

	if got := b.events[0].ResponseStatus.Code; got != 200 {
		t.Errorf("first snapshot: got code %d, want 200", got)
	}
	if _, ok := b.events[0].Annotations["late"]; ok {
		t.Errorf("first snapshot: got late annotation, want none")
	}
	if got := b.events[1].ResponseStatus; got.Code != 403 || got.Reason != metav1.StatusReasonForbidden {
		t.Errorf("second snapshot: got %+v, want code 403 reason Forbidden", got)
	}
}

func TestNilContextIsNoop(t *testing.T) {
	ctx := context.Background()
	AddAnnotation(ctx, "a", "b")
	LogResponseStatus(ctx, &metav1.Status{})
	var c *Context
	c.Begin(&Event{}, MetadataPolicy(), &memBackend{}, nil)
	c.SetResponseCode(200)
	if c.Enabled() {
		t.Errorf("nil context: got enabled, want not")
	}
	if !c.Emit(StageResponseComplete) {
		t.Errorf("nil context Emit: got false, want true")
	}
}

// ResponseObjectWanted is true only for requests audited at
// RequestResponse: the list handler writes lists from cached item bytes
// only when the audit event does not record the response object.
func TestResponseObjectWanted(t *testing.T) {
	if ResponseObjectWanted(context.Background()) {
		t.Error("a request without audit context wants the response object")
	}
	for _, tc := range []struct {
		level Level
		want  bool
	}{{LevelNone, false}, {LevelMetadata, false}, {LevelRequest, false}, {LevelRequestResponse, true}} {
		ctx := WithContext(context.Background())
		FromContext(ctx).Begin(&Event{}, Policy{Level: tc.level}, &memBackend{}, nil)
		if got := ResponseObjectWanted(ctx); got != tc.want {
			t.Errorf("level %s: %v, want %v", tc.level, got, tc.want)
		}
	}
}
