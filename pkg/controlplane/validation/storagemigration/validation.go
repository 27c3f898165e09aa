package storagemigration

import (
	"fmt"
	"strconv"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The generic store validates metadata (name a DNS subdomain, the update
// rules) before these functions run: they check the rest, as upstream's
// functions do after their ObjectMeta calls.

// ValidateStorageVersionMigration validates a migration on create (and as
// the first part of an update).
func ValidateStorageVersionMigration(svm *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	if svm.Spec.Resource.Resource == "" {
		errs = append(errs, field.Required(field.NewPath("spec", "resource", "resource"), "resource is required to be set"))
	}
	return errs
}

// ValidateStorageVersionMigrationUpdate validates an update of the main
// resource: spec.resource is immutable. The field paths ("group",
// "resource") are upstream's, which names them without their parents.
func ValidateStorageVersionMigrationUpdate(svm, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	errs := ValidateStorageVersionMigration(svm)
	if svm.Spec.Resource.Group != old.Spec.Resource.Group {
		errs = append(errs, field.Invalid(field.NewPath("group"), svm.Spec.Resource.Group, "field is immutable"))
	}
	if svm.Spec.Resource.Resource != old.Spec.Resource.Resource {
		errs = append(errs, field.Invalid(field.NewPath("resource"), svm.Spec.Resource.Resource, "field is immutable"))
	}
	return errs
}

// ValidateStorageVersionMigrationStatusUpdate validates an update through
// /status.
func ValidateStorageVersionMigrationStatusUpdate(svm, old *storagemigrationv1.StorageVersionMigration) field.ErrorList {
	var errs field.ErrorList
	fld := field.NewPath("status")
	rvPath := fld.Child("resourceVersion")
	if rv := svm.Status.ResourceVersion; rv != "" {
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			errs = append(errs, field.Invalid(rvPath, rv, fmt.Sprintf("failed to parse resource version %q: %v", rv, err)))
		} else if n < 0 {
			errs = append(errs, field.Invalid(rvPath, n, "must be greater than or equal to 0"))
		}
	}
	condPath := fld.Child("conditions")
	// v1 conditions are metav1.Conditions: upstream's TODO to switch to
	// metav1validation.ValidateConditions once they were.
	errs = append(errs, metav1validation.ValidateConditions(svm.Status.Conditions, condPath)...)
	if old.Status.ResourceVersion != "" && old.Status.ResourceVersion != svm.Status.ResourceVersion {
		errs = append(errs, field.Invalid(rvPath, svm.Status.ResourceVersion, "resourceVersion cannot be updated"))
	}
	succeeded := isTrue(svm, storagemigrationv1.MigrationSucceeded)
	failed := isTrue(svm, storagemigrationv1.MigrationFailed)
	running := isTrue(svm, storagemigrationv1.MigrationRunning)
	conds := svm.Status.Conditions
	if succeeded && failed {
		errs = append(errs, field.Invalid(condPath, conds, "Both success and failed conditions cannot be true at the same time"))
	}
	if succeeded && running {
		errs = append(errs, field.Invalid(condPath, conds, "Running condition cannot be true when success condition is true"))
	}
	if failed && running {
		errs = append(errs, field.Invalid(condPath, conds, "Running condition cannot be true when failed condition is true"))
	}
	if isTrue(old, storagemigrationv1.MigrationSucceeded) && !succeeded {
		errs = append(errs, field.Invalid(condPath, conds, "Success condition cannot be set to false once it is true"))
	}
	if isTrue(old, storagemigrationv1.MigrationFailed) && !failed {
		errs = append(errs, field.Invalid(condPath, conds, "Failed condition cannot be set to false once it is true"))
	}
	return errs
}

func isTrue(svm *storagemigrationv1.StorageVersionMigration, t storagemigrationv1.MigrationConditionType) bool {
	for _, c := range svm.Status.Conditions {
		if c.Type == string(t) {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
