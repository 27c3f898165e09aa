package storagemigration

import (
	"strings"
	"testing"

	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func render(errs field.ErrorList) string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return strings.Join(out, "\n")
}

func svm(mutate func(*storagemigrationv1.StorageVersionMigration)) *storagemigrationv1.StorageVersionMigration {
	s := &storagemigrationv1.StorageVersionMigration{
		ObjectMeta: metav1.ObjectMeta{Name: "m", ResourceVersion: "1"},
		Spec:       storagemigrationv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: "apps", Resource: "deployments"}},
	}
	if mutate != nil {
		mutate(s)
	}
	return s
}

func cond(t string, s metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: "R", LastTransitionTime: metav1.Now()}
}

// Messages and field paths: upstream's
// pkg/apis/storagemigration/validation/validation.go (commit 2dd1588) and
// apimachinery's metav1validation.ValidateConditions (v0.37).
func TestValidateStorageVersionMigration(t *testing.T) {
	for name, tc := range map[string]struct {
		obj  *storagemigrationv1.StorageVersionMigration
		want string
	}{
		"valid":       {svm(nil), ""},
		"core group":  {svm(func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource.Group = "" }), ""},
		"no resource": {svm(func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource.Resource = "" }), "spec.resource.resource: Required value: resource is required to be set"}, // v1.37.2's words,
	} {
		t.Run(name, func(t *testing.T) {
			got := render(ValidateStorageVersionMigration(tc.obj))
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateStorageVersionMigrationUpdate(t *testing.T) {
	old := svm(nil)
	for name, tc := range map[string]struct {
		obj  *storagemigrationv1.StorageVersionMigration
		want string
	}{
		"unchanged":       {svm(nil), ""},
		"labels":          {svm(func(s *storagemigrationv1.StorageVersionMigration) { s.Labels = map[string]string{"a": "b"} }), ""},
		"group changed":   {svm(func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource.Group = "batch" }), "group: Invalid value: \"batch\": field is immutable"},
		"resource change": {svm(func(s *storagemigrationv1.StorageVersionMigration) { s.Spec.Resource.Resource = "replicasets" }), "resource: Invalid value: \"replicasets\": field is immutable"},
	} {
		t.Run(name, func(t *testing.T) {
			got := render(ValidateStorageVersionMigrationUpdate(tc.obj, old))
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateStorageVersionMigrationStatusUpdate(t *testing.T) {
	withStatus := func(rv string, conds ...metav1.Condition) *storagemigrationv1.StorageVersionMigration {
		return svm(func(s *storagemigrationv1.StorageVersionMigration) {
			s.Status.ResourceVersion = rv
			s.Status.Conditions = conds
		})
	}
	for name, tc := range map[string]struct {
		obj, old *storagemigrationv1.StorageVersionMigration
		want     string
	}{
		"running":     {withStatus("12", cond("Running", "True")), withStatus(""), ""},
		"succeeded":   {withStatus("12", cond("Running", "False"), cond("Succeeded", "True")), withStatus("12", cond("Running", "True")), ""},
		"rv not int":  {withStatus("abc"), withStatus(""), `status.resourceVersion: Invalid value: "abc": failed to parse resource version "abc"`},
		"rv negative": {withStatus("-1"), withStatus(""), "status.resourceVersion: Invalid value: -1: must be greater than or equal to 0"},
		"rv changed":  {withStatus("13"), withStatus("12"), `status.resourceVersion: Invalid value: "13": resourceVersion cannot be updated`},
		"both":        {withStatus("1", cond("Succeeded", "True"), cond("Failed", "True")), withStatus(""), "Both success and failed conditions cannot be true at the same time"},
		"run+success": {withStatus("1", cond("Succeeded", "True"), cond("Running", "True")), withStatus(""), "Running condition cannot be true when success condition is true"},
		"run+failed":  {withStatus("1", cond("Failed", "True"), cond("Running", "True")), withStatus(""), "Running condition cannot be true when failed condition is true"},
		"unsucceed":   {withStatus("1", cond("Succeeded", "False")), withStatus("1", cond("Succeeded", "True")), "Success condition cannot be set to false once it is true"},
		"unfail":      {withStatus("1"), withStatus("1", cond("Failed", "True")), "Failed condition cannot be set to false once it is true"},
		"dup type":    {withStatus("1", cond("Running", "True"), cond("Running", "True")), withStatus(""), "status.conditions[1]: Duplicate value: \"Running\""},
		"bad status":  {withStatus("1", cond("Running", "Maybe")), withStatus(""), "status.conditions[0].status: Unsupported value: \"Maybe\""},
		"no reason":   {withStatus("1", metav1.Condition{Type: "Running", Status: "True", LastTransitionTime: metav1.Now()}), withStatus(""), "status.conditions[0].reason: Required value"},
		"no time":     {withStatus("1", metav1.Condition{Type: "Running", Status: "True", Reason: "R"}), withStatus(""), "status.conditions[0].lastTransitionTime: Required value"},
	} {
		t.Run(name, func(t *testing.T) {
			got := render(ValidateStorageVersionMigrationStatusUpdate(tc.obj, tc.old))
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
