// Package admission is the admission chain: plugins that run on every write
// after the object is decoded, mutating it (Admit) and then checking it
// right before it is stored (Validate), as kube-apiserver's admission
// plugins do. Plugins live in sub-packages.
package admission

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Operation is what a request does to an object.
type Operation string

// Operations admission sees.
const (
	Create  Operation = "CREATE"
	Update  Operation = "UPDATE"
	Delete  Operation = "DELETE"
	Connect Operation = "CONNECT"
)

// Attributes describe one write.
type Attributes struct {
	Operation   Operation
	Resource    schema.GroupVersionResource
	Subresource string
	Kind        schema.GroupVersionKind
	Namespace   string
	Name        string
	// Object is the object to be stored (nil on delete); OldObject the
	// current one (nil on create).
	Object, OldObject runtime.Object
	User              *user.Info
	DryRun            bool
	// Options are the request's CreateOptions, UpdateOptions (also for a
	// patch, as upstream) or DeleteOptions (may be nil).
	Options runtime.Object
}

// Plugin is an admission plugin: a [Mutator], a [Validator] or both.
type Plugin interface {
	// Name is the plugin's name, as --enable-admission-plugins spells it
	// (the name label of apiserver_admission_controller_admission_duration_seconds).
	Name() string
	// Handles reports whether the plugin looks at this operation.
	Handles(op Operation) bool
}

// Mutator is a mutating admission plugin. Admit may change a.Object in
// place (never replace it: the caller keeps the pointer it passed); an
// error denies the request and is returned to the client as is (make it an
// API status error). On an update Admit may run more than once (once per
// conflict retry), each time on a fresh copy of the object.
type Mutator interface {
	Plugin
	Admit(ctx context.Context, a Attributes) error
}

// Validator is a validating admission plugin. It must not change the
// object. An error denies the request and is returned to the client as is
// (make it an API status error).
type Validator interface {
	Plugin
	Validate(ctx context.Context, a Attributes) error
}

// ObjectReader may be implemented by a [Validator] to tell cheaply, before
// Validate, whether Validate will look at the request's objects
// (a.Object, a.OldObject; a carries neither when asked). A validator that
// does not implement it is taken to read them.
type ObjectReader interface {
	ReadsObjects(a Attributes) bool
}

// Chain runs the mutating plugins (Admit) and then, right before the
// object is stored, the validating ones (Validate), each phase in plugin
// order; the first error wins. A Chain is a handle: its copies share one
// plugin list, which [Chain.SetPlugins] may replace while the server is
// being built (the servers of the chain are built before every plugin's
// dependencies exist, as upstream initializes plugins after the generic
// config). The zero Chain admits everything.
type Chain struct {
	s *chainState
}

type chainState struct {
	metrics *Metrics
	plugins atomic.Pointer[pluginSet]
}

type pluginSet struct {
	mutators   []Mutator
	validators []Validator
}

// NewChain returns a chain of plugins (nil ones are skipped), recording
// their latencies in m (nil: none).
func NewChain(m *Metrics, plugins ...Plugin) Chain {
	c := Chain{s: &chainState{metrics: m}}
	c.SetPlugins(plugins...)
	return c
}

// SetPlugins replaces the chain's plugins (nil ones are skipped), for
// every copy of c. It panics on the zero Chain.
func (c Chain) SetPlugins(plugins ...Plugin) {
	set := &pluginSet{}
	for _, p := range plugins {
		if p == nil {
			continue
		}
		if m, ok := p.(Mutator); ok {
			set.mutators = append(set.mutators, m)
		}
		if v, ok := p.(Validator); ok {
			set.validators = append(set.validators, v)
		}
	}
	c.s.plugins.Store(set)
}

func (c Chain) set() *pluginSet {
	if c.s == nil {
		return nil
	}
	return c.s.plugins.Load()
}

// Admit runs every mutating plugin that handles a.Operation. With metrics,
// the whole run is one "admit" step and each plugin run one controller
// observation, as upstream's admission metrics decorators record them.
func (c Chain) Admit(ctx context.Context, a Attributes) error {
	set := c.set()
	if set == nil || len(set.mutators) == 0 {
		return nil
	}
	return run(ctx, c.s.metrics, stepAdmit, set.mutators, a, Mutator.Admit)
}

// Validate runs every validating plugin that handles a.Operation, as
// [Chain.Admit] runs the mutating ones.
func (c Chain) Validate(ctx context.Context, a Attributes) error {
	set := c.set()
	if set == nil || len(set.validators) == 0 {
		return nil
	}
	return run(ctx, c.s.metrics, stepValidate, set.validators, a, Validator.Validate)
}

func run[P Plugin](ctx context.Context, m *Metrics, step string, plugins []P, a Attributes, call func(P, context.Context, Attributes) error) error {
	var start time.Time
	if m != nil {
		start = time.Now()
	}
	for _, p := range plugins {
		if !p.Handles(a.Operation) {
			continue
		}
		var began time.Time
		if m != nil {
			began = time.Now()
		}
		err := call(p, ctx, a)
		if m != nil {
			m.observeController(p.Name(), step, a.Operation, err != nil, time.Since(began))
		}
		if err != nil {
			if m != nil {
				m.observeStep(step, a.Operation, true, time.Since(start))
			}
			return err
		}
	}
	if m != nil {
		m.observeStep(step, a.Operation, false, time.Since(start))
	}
	return nil
}

// Handles reports whether any validating plugin handles op.
func (c Chain) Handles(op Operation) bool {
	set := c.set()
	if set == nil {
		return false
	}
	for _, v := range set.validators {
		if v.Handles(op) {
			return true
		}
	}
	return false
}

// ValidationReadsObjects reports whether a validating plugin that handles
// a.Operation may read a's objects: false only when each of them is an
// [ObjectReader] answering false for a (a carries no objects). Storage
// validates an update with copies of the objects, so that no validator
// can change or keep the objects it writes; without a reader, it need not
// copy them.
func (c Chain) ValidationReadsObjects(a Attributes) bool {
	set := c.set()
	if set == nil {
		return false
	}
	for _, v := range set.validators {
		if !v.Handles(a.Operation) {
			continue
		}
		if r, ok := v.(ObjectReader); !ok || r.ReadsObjects(a) {
			return true
		}
	}
	return false
}

// Mutates reports whether any mutating plugin handles op.
func (c Chain) Mutates(op Operation) bool {
	set := c.set()
	if set == nil {
		return false
	}
	for _, m := range set.mutators {
		if m.Handles(op) {
			return true
		}
	}
	return false
}

// ErrNoObject is returned by plugins that need an object and got none.
var ErrNoObject = errors.New("admission: no object")
