package fieldmanager

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// sharedManagers holds the managers of the built-in kinds on the
// process-wide type converter and scheme, which every server of a process
// (kapitest starts many) would otherwise build again for each of its
// (sub)resources: a Manager is read-only once built, and one with the same
// kind, subresource and reset fields behaves the same for every server.
// The set is bounded by the built-in (sub)resources and their reset
// fields.
var sharedManagers struct {
	sync.Mutex
	m map[sharedKey][]sharedEntry
}

type sharedKey struct {
	kind        schema.GroupVersionKind
	subresource string
}

type sharedEntry struct {
	reset map[fieldpath.APIVersion]*fieldpath.Set
	m     *Manager
}

// sharedManager returns the process's manager for c, made by build on
// first use. c must describe a manager on the shared type converter and
// scheme with no convertor, defaulter or creater of its own.
func sharedManager(c Config, build func() (*Manager, error)) (*Manager, error) {
	key := sharedKey{kind: c.Kind, subresource: c.Subresource}
	sharedManagers.Lock()
	defer sharedManagers.Unlock()
	for _, e := range sharedManagers.m[key] {
		if sameResetFields(e.reset, c.ResetFields) {
			return e.m, nil
		}
	}
	m, err := build()
	if err != nil {
		return nil, err
	}
	if sharedManagers.m == nil {
		sharedManagers.m = map[sharedKey][]sharedEntry{}
	}
	sharedManagers.m[key] = append(sharedManagers.m[key], sharedEntry{reset: copyResetFields(c.ResetFields), m: m})
	return m, nil
}

// sameResetFields tells whether a and b reset the same fields in the same
// versions (nil, empty and absent sets differ as the field manager sees
// them: an absent version filters nothing, a nil set is kept as nil).
func sameResetFields(a, b map[fieldpath.APIVersion]*fieldpath.Set) bool {
	if len(a) != len(b) {
		return false
	}
	for v, sa := range a {
		sb, ok := b[v]
		if !ok || (sa == nil) != (sb == nil) {
			return false
		}
		if sa != nil && !sa.Equals(sb) {
			return false
		}
	}
	return true
}

// copyResetFields copies r so that a caller changing its map or sets later
// does not change what later managers are compared with.
func copyResetFields(r map[fieldpath.APIVersion]*fieldpath.Set) map[fieldpath.APIVersion]*fieldpath.Set {
	if r == nil {
		return nil
	}
	out := make(map[fieldpath.APIVersion]*fieldpath.Set, len(r))
	for v, s := range r {
		if s != nil {
			s = s.Union(fieldpath.NewSet())
		}
		out[v] = s
	}
	return out
}
