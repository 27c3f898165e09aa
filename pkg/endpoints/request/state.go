package request

import (
	"context"
	"time"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// State holds the values the filter chain puts on a request's context
// (request info, user, audit ID, ...) in one context node instead of one
// node each. Each context.WithValue is an allocation, and each changed
// context a filter passes on is another (r.WithContext copies the whole
// *http.Request); with a State the chain's filters fill in fields of a
// node made once.
//
// A State is only ever filled in by the code that serves the request, on
// the goroutine that serves it, before it passes the request on: what is
// read through the context is what the filters set before (as with
// context values). Reads go through the usual accessors (UserFrom,
// RequestInfoFrom, ...), which find the innermost value, whether it is
// a field of a State or a context value added below it.
//
// A field is set at most once: setting one that is set already, or
// setting a field when the request's context is not the State's own node
// (something added a context below it, which must keep shadowing it),
// reports false, and the caller adds a context value as before.
type State struct {
	info          *RequestInfo
	user          *user.Info
	authorizer    authorizer.Authorizer
	auditID       string
	received      time.Time
	namespace     string
	hasReceived   bool
	hasNamespace  bool
	muxIncomplete bool
	// filter and filterStart are the filter whose latency is being
	// measured and when it started (StartFilter): a small id and
	// monotonic nanoseconds keep the State in its allocation size class.
	filter      uint8
	nextra      int
	extra       [stateExtraValues]stateValue
	filterStart int64
}

// monoBase is what filter start times are measured from (time.Since
// reads the monotonic clock).
var monoBase = time.Now()

// stateExtraValues is the room for other packages' values (the audit
// Context and the warning Recorder of the filter chain).
const stateExtraValues = 2

type stateValue struct{ key, val any }

// stateCtx is the context node of a State.
type stateCtx struct {
	context.Context
	State
}

// WithState returns ctx with a new, empty State node.
func WithState(ctx context.Context) context.Context {
	return &stateCtx{Context: ctx}
}

// StateFrom returns the request's State, found through the contexts
// derived from its node too; nil if the request has none.
func StateFrom(ctx context.Context) *State {
	if c, ok := ctx.(*stateCtx); ok {
		return &c.State
	}
	s, _ := ctx.Value(stateKey).(*State)
	return s
}

// StartFilter records that filter (a caller's id, not 0) starts now, for
// the filter latency metric (upstream's filterlatency.TrackStarted); a
// later StartFilter replaces it. Only the goroutine serving the request
// calls it and FilterElapsed.
func (s *State) StartFilter(filter uint8) {
	if s == nil {
		return
	}
	s.filter, s.filterStart = filter, int64(time.Since(monoBase))
}

// FilterElapsed returns the filter StartFilter last recorded (0 if none)
// and the time since.
func (s *State) FilterElapsed() (uint8, time.Duration) {
	if s == nil || s.filter == 0 {
		return 0, 0
	}
	return s.filter, time.Since(monoBase) - time.Duration(s.filterStart)
}

// StateOf returns the State of ctx when ctx is a State's node itself (not
// a context derived from one), nil otherwise.
func StateOf(ctx context.Context) *State {
	if c, ok := ctx.(*stateCtx); ok {
		return &c.State
	}
	return nil
}

// SetRequestInfo sets the request info (RequestInfoFrom) when not set.
func (s *State) SetRequestInfo(info *RequestInfo) bool {
	if s == nil || s.info != nil || info == nil {
		return false
	}
	s.info = info
	return true
}

// SetUser sets the user (UserFrom) when not set.
func (s *State) SetUser(u *user.Info) bool {
	if s == nil || s.user != nil || u == nil {
		return false
	}
	s.user = u
	return true
}

// SetAuthorizer sets the authorizer (AuthorizerFrom) when not set.
func (s *State) SetAuthorizer(a authorizer.Authorizer) bool {
	if s == nil || s.authorizer != nil || a == nil {
		return false
	}
	s.authorizer = a
	return true
}

// SetAuditID sets the audit ID (AuditIDFrom) when not set.
func (s *State) SetAuditID(id string) bool {
	if s == nil || s.auditID != "" || id == "" {
		return false
	}
	s.auditID = id
	return true
}

// SetReceivedTimestamp sets when the request arrived
// (ReceivedTimestampFrom) when not set.
func (s *State) SetReceivedTimestamp(t time.Time) bool {
	if s == nil || s.hasReceived {
		return false
	}
	s.received, s.hasReceived = t, true
	return true
}

// SetNamespace sets the request's namespace (NamespaceFrom) when not set.
func (s *State) SetNamespace(ns string) bool {
	if s == nil || s.hasNamespace {
		return false
	}
	s.namespace, s.hasNamespace = ns, true
	return true
}

// SetMuxIncomplete marks the request as MuxIncomplete.
func (s *State) SetMuxIncomplete() bool {
	if s == nil {
		return false
	}
	s.muxIncomplete = true
	return true
}

// SetValue keeps val under key, as context.WithValue would, for another
// package's value; false when key is set already or there is no room.
// key must be comparable and not one of this package's.
func (s *State) SetValue(key, val any) bool {
	if s == nil || s.nextra == len(s.extra) {
		return false
	}
	for i := range s.nextra {
		if s.extra[i].key == key {
			return false
		}
	}
	s.extra[s.nextra] = stateValue{key: key, val: val}
	s.nextra++
	return true
}

// Value returns the State's value for key, or its parent's. The audit ID
// and the received timestamp are returned as pointers (a string or a
// time.Time in an interface would be an allocation per lookup); their
// accessors read both forms.
func (c *stateCtx) Value(k any) any {
	if k, ok := k.(key); ok {
		switch k {
		case requestInfoKey:
			if c.info != nil {
				return c.info
			}
		case userKey:
			if c.user != nil {
				return c.user
			}
		case authorizerKey:
			if c.authorizer != nil {
				return c.authorizer
			}
		case auditIDKey:
			if c.auditID != "" {
				return &c.auditID
			}
		case receivedTimestampKey:
			if c.hasReceived {
				return &c.received
			}
		case namespaceKey:
			if c.hasNamespace {
				return &c.namespace
			}
		case muxIncompleteKey:
			if c.muxIncomplete {
				return true
			}
		case stateKey:
			return &c.State
		}
		return c.Context.Value(k)
	}
	for i := range c.nextra {
		if c.extra[i].key == k {
			return c.extra[i].val
		}
	}
	return c.Context.Value(k)
}
