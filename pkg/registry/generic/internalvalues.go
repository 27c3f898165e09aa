package generic

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/registry/internaljson"
)

// internalValues returns errs with the bad values of obj's handwritten
// errors shown as upstream shows them. Upstream's handwritten validation of
// a built-in kind runs on the internal type, and field.Error renders a
// struct value with encoding/json: Go field names, nothing omitted,
// embedded structs flattened (internaljson). Its declarative errors
// (declarativeEnforced) are computed on the versioned type and keep their
// JSON form, as do custom resources, CRDs and APIServices (not k8s.io/api
// types). The errors are copied, not changed in place.
func internalValues(obj runtime.Object, errs field.ErrorList) field.ErrorList {
	if !builtInType(reflect.TypeOf(obj)) {
		return errs
	}
	var out field.ErrorList
	for i, e := range errs {
		if e == nil || declarativeEnforced(e) {
			continue
		}
		v := internaljson.Value(e.BadValue)
		if reflect.TypeOf(v) == reflect.TypeOf(e.BadValue) {
			continue
		}
		if out == nil {
			out = append(make(field.ErrorList, 0, len(errs)), errs...)
		}
		c := *e
		c.BadValue = v
		out[i] = &c
	}
	if out == nil {
		return errs
	}
	return out
}
