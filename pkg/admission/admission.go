// Package admission is the admission chain: checks that run on every write
// after the object is decoded and before it is stored, as kube-apiserver's
// validating admission plugins do. Plugins live in sub-packages.
package admission

import (
	"context"
	"errors"

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
	// Handles reports whether the plugin looks at this operation.
	Handles(op Operation) bool
	Validate(ctx context.Context, a Attributes) error
}

// Chain runs validators in order; the first error wins.
type Chain []Validator

// Validate runs every validator that handles a.Operation.
func (c Chain) Validate(ctx context.Context, a Attributes) error {
	for _, v := range c {
		if v == nil || !v.Handles(a.Operation) {
			continue
		}
		if err := v.Validate(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// Handles reports whether any validator handles op.
func (c Chain) Handles(op Operation) bool {
	for _, v := range c {
		if v != nil && v.Handles(op) {
			return true
		}
	}
	return false
}

// ErrNoObject is returned by plugins that need an object and got none.
var ErrNoObject = errors.New("admission: no object")
