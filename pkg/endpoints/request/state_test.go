package request

import (
	"context"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

type otherKey struct{}

// TestStateValues checks that a State's fields read as the context values
// they replace, through the same accessors, and that a value added below
// a State still shadows it.
func TestStateValues(t *testing.T) {
	ctx := WithState(context.Background())
	s := StateOf(ctx)
	if s == nil {
		t.Fatal("StateOf(WithState(ctx)) = nil")
	}
	if _, ok := RequestInfoFrom(ctx); ok {
		t.Fatal("empty State has request info")
	}
	if _, ok := UserFrom(ctx); ok {
		t.Fatal("empty State has a user")
	}
	if _, ok := ReceivedTimestampFrom(ctx); ok {
		t.Fatal("empty State has a received timestamp")
	}
	if id := AuditIDFrom(ctx); id != "" {
		t.Fatalf("empty State has audit ID %q", id)
	}
	if MuxIncomplete(ctx) {
		t.Fatal("empty State is MuxIncomplete")
	}

	info := &RequestInfo{Verb: "get"}
	alice := &user.Info{Name: "alice"}
	now := time.Unix(1700000000, 5)
	if !s.SetRequestInfo(info) || !s.SetUser(alice) || !s.SetAuditID("id-1") ||
		!s.SetReceivedTimestamp(now) || !s.SetNamespace("") || !s.SetMuxIncomplete() ||
		!s.SetValue(otherKey{}, 42) {
		t.Fatal("a first Set failed")
	}
	if got, ok := RequestInfoFrom(ctx); !ok || got != info {
		t.Errorf("RequestInfoFrom = %v, %v", got, ok)
	}
	if got, ok := UserFrom(ctx); !ok || got != alice {
		t.Errorf("UserFrom = %v, %v", got, ok)
	}
	if got := AuditIDFrom(ctx); got != "id-1" {
		t.Errorf("AuditIDFrom = %q", got)
	}
	if got, ok := ReceivedTimestampFrom(ctx); !ok || !got.Equal(now) {
		t.Errorf("ReceivedTimestampFrom = %v, %v", got, ok)
	}
	if !MuxIncomplete(ctx) {
		t.Error("MuxIncomplete = false")
	}
	if got := ctx.Value(otherKey{}); got != 42 {
		t.Errorf("Value(otherKey) = %v", got)
	}
	if got := ctx.Value(namespaceKey); got == nil || NamespaceFrom(ctx) != "" {
		t.Errorf("namespace \"\" not set: %v", got)
	}

	// Set once: a second value goes on a context below, as before.
	if s.SetUser(&user.Info{Name: "bob"}) || s.SetAuditID("id-2") || s.SetRequestInfo(&RequestInfo{}) ||
		s.SetReceivedTimestamp(now.Add(time.Second)) || s.SetNamespace("ns") || s.SetValue(otherKey{}, 43) {
		t.Error("a second Set succeeded")
	}
	bob := &user.Info{Name: "bob"}
	below := WithNamespace(WithAuditID(WithUser(ctx, bob), "id-2"), "ns")
	if got, _ := UserFrom(below); got != bob {
		t.Errorf("UserFrom(below) = %v, want bob", got)
	}
	if got := AuditIDFrom(below); got != "id-2" {
		t.Errorf("AuditIDFrom(below) = %q", got)
	}
	if got := NamespaceFrom(below); got != "ns" {
		t.Errorf("NamespaceFrom(below) = %q", got)
	}
	if got, _ := UserFrom(ctx); got != alice {
		t.Errorf("UserFrom(ctx) = %v after a value below, want alice", got)
	}
	// A derived context is not the State's node: it cannot be set.
	if StateOf(below) != nil {
		t.Error("StateOf of a derived context is not nil")
	}
	var none *State
	if none.SetUser(alice) || none.SetValue(otherKey{}, 1) {
		t.Error("Set on a nil State succeeded")
	}

	// An inner State (the timeout filter's goroutine) sees the outer one's
	// values until it sets its own.
	dctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	inner := WithState(dctx)
	if got, _ := UserFrom(inner); got != alice {
		t.Errorf("inner UserFrom = %v, want alice", got)
	}
	if !StateOf(inner).SetUser(bob) {
		t.Fatal("inner SetUser failed")
	}
	if got, _ := UserFrom(inner); got != bob {
		t.Errorf("inner UserFrom = %v, want bob", got)
	}
	if got, _ := UserFrom(ctx); got != alice {
		t.Errorf("outer UserFrom = %v, want alice", got)
	}
	if _, ok := inner.Deadline(); !ok {
		t.Error("inner State lost its parent's deadline")
	}
	if got := inner.Value(otherKey{}); got != 42 {
		t.Errorf("inner Value(otherKey) = %v", got)
	}
	// A context derived from a State cancels with its parent without a
	// goroutine of its own, as from any context.
	cctx, ccancel := context.WithCancel(inner)
	cancel()
	<-cctx.Done()
	ccancel()
}

// TestStateExtraValuesFull checks that a State out of room reports it.
func TestStateExtraValuesFull(t *testing.T) {
	s := StateOf(WithState(context.Background()))
	for i := range stateExtraValues {
		if !s.SetValue(i, i) {
			t.Fatalf("SetValue %d failed", i)
		}
	}
	if s.SetValue(stateExtraValues, 0) {
		t.Fatal("SetValue beyond the room succeeded")
	}
}

// TestStateLookupAllocations: reading the audit ID and the received
// timestamp from a State allocates nothing.
func TestStateLookupAllocations(t *testing.T) {
	ctx := WithState(context.Background())
	s := StateOf(ctx)
	s.SetAuditID("0b6f0a3c-6f0e-4c58-9d8b-7d3b9d1b8e11")
	s.SetReceivedTimestamp(time.Now())
	s.SetNamespace("bench")
	inner := WithState(ctx)
	if n := testing.AllocsPerRun(100, func() {
		_ = AuditIDFrom(inner)
		_, _ = ReceivedTimestampFrom(inner)
		_ = NamespaceFrom(inner)
	}); n != 0 {
		t.Fatalf("lookups allocate %v times", n)
	}
}
