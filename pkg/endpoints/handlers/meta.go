package handlers

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// wipeObjectMetaSystemFields clears the metadata only the server sets.
func wipeObjectMetaSystemFields(m metav1.Object) {
	m.SetCreationTimestamp(metav1.Time{})
	m.SetUID("")
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
	m.SetSelfLink("")
}

// expectedNamespace is the namespace objects of this scope must carry:
// the request's for namespaced resources, "" otherwise (namespaces
// themselves included).
func (s *RequestScope) expectedNamespace(requestNamespace string) string {
	if !s.Namespaced {
		return ""
	}
	return requestNamespace
}

// ensureNamespace makes the object's namespace the request's: an empty one
// is filled in, a cluster-scoped object's is cleared, a different one is a
// 400.
func ensureNamespace(requestNamespace string, m metav1.Object) error {
	objNamespace := m.GetNamespace()
	switch {
	case objNamespace == requestNamespace:
		return nil
	case objNamespace == metav1.NamespaceNone:
		m.SetNamespace(requestNamespace)
		return nil
	case requestNamespace == metav1.NamespaceNone:
		m.SetNamespace(metav1.NamespaceNone)
		return nil
	}
	return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
}

// checkName checks the object's name and namespace against the URL's. An
// object without a name is upstream's "undeterminable" one (its namer
// refuses an empty name with errEmptyName).
func checkName(obj runtime.Object, name, namespace string) error {
	m, err := meta.Accessor(obj)
	if err == nil && m.GetName() == "" {
		err = errEmptyName
	}
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s based on URL) was undeterminable: %v", name, err))
	}
	if m.GetName() != name {
		return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), name))
	}
	if namespace != "" && m.GetNamespace() != "" && m.GetNamespace() != namespace {
		return apierrors.NewBadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the request (%s)", m.GetNamespace(), namespace))
	}
	return nil
}
