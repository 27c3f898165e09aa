package conversion

import (
	"fmt"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// checkIdentity fails when a converted object is not the same object as
// the original: kind, name, namespace and uid must be kept.
func checkIdentity(in, out *unstructured.Unstructured) error {
	if e, a := in.GetKind(), out.GetKind(); e != a {
		return fmt.Errorf("must have the same kind: %v != %v", e, a)
	}
	if e, a := in.GetName(), out.GetName(); e != a {
		return fmt.Errorf("must have the same name: %v != %v", e, a)
	}
	if e, a := in.GetNamespace(), out.GetNamespace(); e != a {
		return fmt.Errorf("must have the same namespace: %v != %v", e, a)
	}
	if e, a := in.GetUID(), out.GetUID(); e != a {
		return fmt.Errorf("must have the same UID: %v != %v", e, a)
	}
	return nil
}

// restoreMeta replaces converted's metadata with a deep copy of
// original's, keeping only converted's labels and annotations (validated
// when they differ from the original's; removed when converted has none).
func restoreMeta(original, converted *unstructured.Unstructured) error {
	m, ok := converted.Object["metadata"]
	if !ok {
		return fmt.Errorf("missing metadata in converted object")
	}
	sent, ok := m.(map[string]any)
	if !ok {
		return fmt.Errorf("invalid metadata of type %T in converted object", m)
	}
	restored := map[string]any{}
	if om, ok := original.Object["metadata"]; ok {
		r, ok := runtime.DeepCopyJSONValue(om).(map[string]any)
		if !ok {
			return fmt.Errorf("invalid metadata of type %T in input object", om)
		}
		restored = r
	}
	for _, fld := range []string{"labels", "annotations"} {
		v, found := sent[fld]
		if !found || v == nil {
			delete(restored, fld)
			continue
		}
		got, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("invalid metadata.%s of type %T in converted object", fld, v)
		}
		had, ok := restored[fld].(map[string]any)
		if !ok && restored[fld] != nil {
			return fmt.Errorf("invalid metadata.%s of type %T in original object", fld, restored[fld])
		}
		changed := len(had) != len(got)
		for k, v := range got {
			s, ok := v.(string)
			if !ok {
				return fmt.Errorf("metadata.%s[%s] must be a string, but is %T in converted object", fld, k, v)
			}
			if hv, ok := had[k].(string); !ok || hv != s {
				changed = true
			}
		}
		if changed {
			strs := make(map[string]string, len(got))
			for k, v := range got {
				strs[k] = v.(string)
			}
			var errs field.ErrorList
			if fld == "labels" {
				errs = metav1validation.ValidateLabels(strs, field.NewPath("metadata", "labels"))
			} else {
				// upstream's path says "annotation"
				errs = apivalidation.ValidateAnnotations(strs, field.NewPath("metadata", "annotation"))
			}
			if len(errs) > 0 {
				return errs.ToAggregate()
			}
		}
		restored[fld] = got
	}
	converted.Object["metadata"] = restored
	return nil
}
