package audit

import (
	authnv1 "k8s.io/api/authentication/v1"

	"context"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// Context is the audit state of one request. It is created early in the
// handler chain (before authentication) so that annotations added by any
// filter are kept; the audit filter later decides whether the request is
// recorded (Begin) and emits the stages. All methods are safe for concurrent
// use and are no-ops on a nil *Context.
type Context struct {
	mu          sync.Mutex
	annotations map[string]string
	event       *Event // nil until Begin: the request is not audited
	policy      Policy
	backend     Backend
	metrics     *Metrics
}

type contextKey struct{}

// WithContext returns ctx carrying a new, empty audit Context.
func WithContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, contextKey{}, &Context{})
}

// SetContext gives the request of s a new, empty audit Context on its
// state (what WithContext does with a context value); false when s has no
// room for it (or is nil), and then the caller uses WithContext.
func SetContext(s *request.State) bool {
	return s.SetValue(contextKey{}, &Context{})
}

// FromContext returns the audit Context on ctx, or nil.
func FromContext(ctx context.Context) *Context {
	c, _ := ctx.Value(contextKey{}).(*Context)
	return c
}

// AddAnnotation records key=value on the request's audit event. The first
// value set for a key wins; later ones are dropped with a debug log, as
// upstream keeps the first.
func AddAnnotation(ctx context.Context, key, value string) {
	c := FromContext(ctx)
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.annotations[key]; ok {
		if old != value {
			slog.Debug("audit annotation already set", "key", key, "value", old, "dropped", value)
		}
		return
	}
	if c.annotations == nil {
		c.annotations = make(map[string]string)
	}
	c.annotations[key] = value
}

// Annotations returns a copy of the annotations added to c so far (nil
// when there are none, or c is nil). The token cache reads those an
// authentication added on its own audit Context, to replay them on every
// request its result serves.
func (c *Context) Annotations() map[string]string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.annotations) == 0 {
		return nil
	}
	out := make(map[string]string, len(c.annotations))
	for k, v := range c.annotations {
		out[k] = v
	}
	return out
}

// LogResponseStatus records the bounded fields of a Status answer (status,
// message, reason, details, code) as the event's responseStatus, as upstream
// does at Metadata level and above. Writers of Status responses call it
// before writing.
func LogResponseStatus(ctx context.Context, s *metav1.Status) {
	c := FromContext(ctx)
	if c == nil || s == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event == nil {
		return
	}
	rs := &metav1.Status{Status: s.Status, Message: s.Message, Reason: s.Reason, Code: s.Code}
	if s.Details != nil {
		d := *s.Details
		rs.Details = &d
	}
	c.event.ResponseStatus = rs
}

// Begin starts recording ev under policy p, sending stages to b and
// counting the request's level and its events in m (nil: not counted). A
// policy level of None (or a nil backend) leaves the request unaudited
// (its level None is still counted, as upstream counts every request the
// policy is evaluated for).
func (c *Context) Begin(ev *Event, p Policy, b Backend, m *Metrics) {
	if c == nil || b == nil {
		return
	}
	m.observeLevel(p.Level)
	if !LevelNone.Less(p.Level) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ev.Kind = EventKind
	ev.APIVersion = GroupVersion
	ev.Level = p.Level
	c.event, c.policy, c.backend, c.metrics = ev, p, b, m
}

// Enabled reports whether the request is being audited.
func (c *Context) Enabled() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.event != nil
}

// SetResponseCode records the HTTP status code of the response, keeping any
// Status fields recorded by LogResponseStatus.
func (c *Context) SetResponseCode(code int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event == nil {
		return
	}
	if c.event.ResponseStatus == nil {
		c.event.ResponseStatus = &metav1.Status{}
	}
	c.event.ResponseStatus.Code = int32(code)
}

// SetResponseStatusIfUnset records s unless a response status is already
// recorded. It reports whether s was recorded.
func (c *Context) SetResponseStatusIfUnset(s *metav1.Status) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event == nil || c.event.ResponseStatus != nil {
		return false
	}
	cp := *s
	c.event.ResponseStatus = &cp
	return true
}

// SetResponseStatus records s, replacing what was recorded.
func (c *Context) SetResponseStatus(s *metav1.Status) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event == nil {
		return
	}
	cp := *s
	c.event.ResponseStatus = &cp
}

// Emit stamps the event with stage and the current time and hands a snapshot
// of it to the backend, unless the policy omits that stage. It reports
// whether the backend accepted it (true when nothing was to be sent).
func (c *Context) Emit(stage Stage) bool {
	if c == nil {
		return true
	}
	c.mu.Lock()
	if c.event == nil || c.policy.Omits(stage) {
		c.mu.Unlock()
		return true
	}
	c.event.Stage = stage
	c.event.StageTimestamp = metav1.NewMicroTime(time.Now())
	ev := c.snapshotLocked()
	b, m := c.backend, c.metrics
	c.mu.Unlock()
	m.observeEvent()
	return b.ProcessEvents(ev)
}

// snapshotLocked returns a copy of the event that later changes do not touch.
func (c *Context) snapshotLocked() *Event {
	ev := *c.event
	if rs := c.event.ResponseStatus; rs != nil {
		cp := *rs
		if rs.Details != nil {
			d := *rs.Details
			cp.Details = &d
		}
		ev.ResponseStatus = &cp
	}
	if len(c.annotations) > 0 {
		ev.Annotations = make(map[string]string, len(c.annotations))
		for k, v := range c.annotations {
			ev.Annotations[k] = v
		}
	}
	return &ev
}

// LogImpersonatedUser records the user a request impersonates as the
// event's impersonatedUser and, when a constrained impersonation mode
// allowed it, that mode's verb (constraint, e.g. impersonate:user-info) as
// authenticationMetadata.impersonationConstraint, as upstream's
// audit.LogImpersonatedUser. Legacy impersonation passes "".
func LogImpersonatedUser(ctx context.Context, u authnv1.UserInfo, constraint string) {
	c := FromContext(ctx)
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event != nil {
		c.event.ImpersonatedUser = &u
		if constraint != "" {
			// A new value: snapshots already emitted keep theirs.
			c.event.AuthenticationMetadata = &AuthenticationMetadata{ImpersonationConstraint: constraint}
		}
	}
}
