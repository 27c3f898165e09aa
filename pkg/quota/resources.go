package quota

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Add returns a + b (a new list).
func Add(a, b corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(a)+len(b))
	for k, v := range a {
		out[k] = v.DeepCopy()
	}
	for k, v := range b {
		q := out[k]
		if _, ok := out[k]; ok {
			q.Add(v)
		} else {
			q = v.DeepCopy()
		}
		out[k] = q
	}
	return out
}

// SubtractNonNegative returns a - b, each value at least zero, for the
// names of a.
func SubtractNonNegative(a, b corev1.ResourceList) corev1.ResourceList {
	out := make(corev1.ResourceList, len(a))
	for k, v := range a {
		q := v.DeepCopy()
		if sub, ok := b[k]; ok {
			q.Sub(sub)
		}
		if q.Sign() < 0 {
			q = *resource.NewQuantity(0, q.Format)
		}
		out[k] = q
	}
	return out
}

// Mask returns the entries of list whose names are in names.
func Mask(list corev1.ResourceList, names []corev1.ResourceName) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, n := range names {
		if v, ok := list[n]; ok {
			out[n] = v.DeepCopy()
		}
	}
	return out
}

// Names returns the names of list, sorted.
func Names(list corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(list))
	for k := range list {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// IsZero reports whether every value of list is zero.
func IsZero(list corev1.ResourceList) bool {
	for _, v := range list {
		if !v.IsZero() {
			return false
		}
	}
	return true
}

// LessThanOrEqual reports whether a <= b for every name of a that b has,
// and the names exceeding.
func LessThanOrEqual(a, b corev1.ResourceList) (bool, []corev1.ResourceName) {
	var exceeded []corev1.ResourceName
	for _, k := range Names(a) {
		if limit, ok := b[k]; ok {
			v := a[k]
			if v.Cmp(limit) > 0 {
				exceeded = append(exceeded, k)
			}
		}
	}
	return len(exceeded) == 0, exceeded
}

// Equal reports whether a and b hold the same names and quantities.
func Equal(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// PrettyPrint renders list as "name=value" sorted by name, comma-joined
// (upstream's prettyPrint, in quota admission messages).
func PrettyPrint(list corev1.ResourceList) string {
	parts := make([]string, 0, len(list))
	for _, k := range Names(list) {
		v := list[k]
		parts = append(parts, string(k)+"="+v.String())
	}
	return strings.Join(parts, ",")
}

// PrettyPrintNames renders names sorted and comma-joined.
func PrettyPrintNames(names []corev1.ResourceName) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}

func one() resource.Quantity { return *resource.NewQuantity(1, resource.DecimalSI) }
