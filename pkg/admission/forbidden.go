package admission

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// NewForbidden is the 403 a plugin denies a request with, as upstream's
// admission.NewForbidden: `<resource> "<name>" is forbidden: <err>`, the
// name being the request's, else the object's name, else its generateName,
// else "Unknown". A Forbidden err is returned as is.
func NewForbidden(a Attributes, err error) error {
	if apierrors.IsForbidden(err) {
		return err
	}
	name := a.Name
	if name == "" {
		name = "Unknown"
		if m, ok := a.Object.(interface {
			GetName() string
			GetGenerateName() string
		}); ok {
			if n := m.GetName(); n != "" {
				name = n
			} else if g := m.GetGenerateName(); g != "" {
				name = g
			}
		}
	}
	return apierrors.NewForbidden(a.Resource.GroupResource(), name, err)
}
