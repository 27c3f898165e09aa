package filters

import (
	"sync"
	"testing"

	"github.com/google/uuid"
)

// TestAuditIDsAreRandomUUIDs: the audit IDs made for requests without one
// are version-4 UUIDs in the canonical form (as uuid.NewString's), and
// distinct, also across refills of the source's buffer and concurrently.
func TestAuditIDsAreRandomUUIDs(t *testing.T) {
	var src uuidSource
	const workers, each = 4, 100 // more than one buffer (64 IDs)
	ids := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				ids[w] = append(ids[w], src.newString())
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, l := range ids {
		for _, id := range l {
			u, err := uuid.Parse(id)
			if err != nil {
				t.Fatalf("%q: %v", id, err)
			}
			if u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != id {
				t.Fatalf("%q: version %v, variant %v, canonical %q", id, u.Version(), u.Variant(), u.String())
			}
			if seen[id] {
				t.Fatalf("%q made twice", id)
			}
			seen[id] = true
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = src.newString() }); n > 1 {
		t.Errorf("newString allocates %v times, want 1 (the string)", n)
	}
}
