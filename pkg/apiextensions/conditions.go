package apiextensions

import (
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cleanupFinalizer holds a deleted CRD until its custom resources are
// gone (upstream's name).
const cleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

func findCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) *apiextensionsv1.CustomResourceDefinitionCondition {
	for i := range crd.Status.Conditions {
		if crd.Status.Conditions[i].Type == t {
			return &crd.Status.Conditions[i]
		}
	}
	return nil
}

func isConditionTrue(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	c := findCondition(crd, t)
	return c != nil && c.Status == apiextensionsv1.ConditionTrue
}

// setCondition adds or replaces the condition of c's type; the transition
// time changes only with the status, as upstream.
func setCondition(crd *apiextensionsv1.CustomResourceDefinition, c apiextensionsv1.CustomResourceDefinitionCondition) {
	old := findCondition(crd, c.Type)
	if old == nil {
		c.LastTransitionTime = metav1.Now()
		crd.Status.Conditions = append(crd.Status.Conditions, c)
		return
	}
	if old.Status != c.Status {
		c.LastTransitionTime = metav1.Now()
	} else {
		c.LastTransitionTime = old.LastTransitionTime
	}
	*old = c
}

func hasFinalizer(crd *apiextensionsv1.CustomResourceDefinition, f string) bool {
	return slices.Contains(crd.Finalizers, f)
}

// storageVersion is the name of the version marked storage ("" if none).
func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// addStoredVersion records the storage version in status.storedVersions.
func addStoredVersion(crd *apiextensionsv1.CustomResourceDefinition) {
	if v := storageVersion(crd); v != "" && !slices.Contains(crd.Status.StoredVersions, v) {
		crd.Status.StoredVersions = append(crd.Status.StoredVersions, v)
	}
}
