// Package admission is the admission chain: checks that run on every write
// after the object is decoded and before it is stored, as kube-apiserver's
// validating admission plugins do. Plugins live in sub-packages.
package admission

import (
	"context"
	"errors"
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
}

// Validator is a validating admission plugin. It must not change the
// object. An error denies the request and is returned to the client as is
// (make it an API status error).
type Validator interface {
	// Name is the plugin's name, as --enable-admission-plugins spells it
	// (the name label of apiserver_admission_controller_admission_duration_seconds).
	Name() string
	// Handles reports whether the plugin looks at this operation.
	Handles(op Operation) bool
	Validate(ctx context.Context, a Attributes) error
}

// Chain runs validators in order; the first error wins. The zero Chain
// admits everything.
type Chain struct {
	validators []Validator
	metrics    *Metrics
}

// NewChain returns the chain of validators (nil ones are skipped),
// recording their latencies in m (nil: none).
func NewChain(m *Metrics, validators ...Validator) Chain {
	c := Chain{metrics: m}
	for _, v := range validators {
		if v != nil {
			c.validators = append(c.validators, v)
		}
	}
	return c
}

// Validate runs every validator that handles a.Operation. With metrics, the
// whole run is one "validate" step and each validator run one controller
// observation, as upstream's admission metrics decorators record them.
func (c Chain) Validate(ctx context.Context, a Attributes) error {
	var start time.Time
	if c.metrics != nil {
		start = time.Now()
	}
	for _, v := range c.validators {
		if !v.Handles(a.Operation) {
			continue
		}
		var began time.Time
		if c.metrics != nil {
			began = time.Now()
		}
		err := v.Validate(ctx, a)
		if c.metrics != nil {
			c.metrics.observeController(v.Name(), a.Operation, err != nil, time.Since(began))
		}
		if err != nil {
			if c.metrics != nil {
				c.metrics.observeStep(a.Operation, true, time.Since(start))
			}
			return err
		}
	}
	if c.metrics != nil {
		c.metrics.observeStep(a.Operation, false, time.Since(start))
	}
	return nil
}

// Handles reports whether any validator handles op.
func (c Chain) Handles(op Operation) bool {
	for _, v := range c.validators {
		if v.Handles(op) {
			return true
		}
	}
	return false
}

// ErrNoObject is returned by plugins that need an object and got none.
var ErrNoObject = errors.New("admission: no object")
