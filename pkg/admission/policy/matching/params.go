package matching

import (
	"context"
	"errors"

	arv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// Params reads the param objects of policies, as JSON maps.
type Params interface {
	// Namespaced reports whether apiVersion/kind is namespace-scoped; an
	// unknown kind is an error.
	Namespaced(apiVersion, kind string) (bool, error)
	// Get returns one object (apierrors.IsNotFound when missing).
	Get(ctx context.Context, apiVersion, kind, namespace, name string) (map[string]any, error)
	// List returns the objects sel selects in namespace ("": all).
	List(ctx context.Context, apiVersion, kind, namespace string, sel labels.Selector) ([]map[string]any, error)
}

// NoParams is the single evaluation of a policy without paramKind.
var NoParams = []map[string]any{nil}

// ResolveParams returns the param objects a binding's paramRef (with its
// compiled selector sel) selects for a policy of paramKind kind: the
// single nil object when kind is nil, none (and no error) when none is
// found and parameterNotFoundAction is Allow, and the single nil object
// when the binding has no paramRef (params is null then, as the API
// documents). The errors are upstream's (k8s.io/apiserver
// pkg/admission/plugin/policy/generic policy_dispatcher.go collectParams);
// the caller wraps them in "failed to configure binding: ".
func ResolveParams(ctx context.Context, p Params, kind *arv1.ParamKind, ref *arv1.ParamRef, sel labels.Selector, a *admission.Attributes) ([]map[string]any, error) {
	if kind == nil {
		return NoParams, nil
	}
	if ref == nil {
		return NoParams, nil
	}
	if p == nil {
		return nil, errors.New("params are not available")
	}
	namespaced, err := p.Namespaced(kind.APIVersion, kind.Kind)
	if err != nil {
		return nil, err
	}
	ns := ref.Namespace
	switch {
	case !namespaced && ns != "":
		return nil, errors.New("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
	case namespaced && ns == "":
		if ns = a.Namespace; ns == "" {
			return nil, errors.New("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
		}
	}
	var found []map[string]any
	switch {
	case ref.Name != "":
		obj, err := p.Get(ctx, kind.APIVersion, kind.Kind, ns, ref.Name)
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		if obj != nil {
			found = append(found, obj)
		}
	case sel != nil:
		if found, err = p.List(ctx, kind.APIVersion, kind.Kind, ns, sel); err != nil {
			return nil, err
		}
	}
	if len(found) == 0 {
		if ref.ParameterNotFoundAction != nil && *ref.ParameterNotFoundAction == arv1.AllowAction {
			return nil, nil
		}
		return nil, errors.New("no params found for policy binding with `Deny` parameterNotFoundAction")
	}
	return found, nil
}
