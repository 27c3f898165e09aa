package memory

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestKeyIndex(t *testing.T) {
	var x keyIndex
	want := map[string]bool{}
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		k := fmt.Sprintf("/k/%05d", r.IntN(3000))
		x.insert(k)
		want[k] = true
	}
	sorted := make([]string, 0, len(want))
	for k := range want {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	check := func(t *testing.T, sorted []string) {
		t.Helper()
		if x.len() != len(sorted) {
			t.Fatalf("len %d, want %d", x.len(), len(sorted))
		}
		for _, from := range []string{"", "/k/", "/k/01000", "/k/015", "/k/02999", "/k/9", "~"} {
			var got []string
			x.ascend(from, func(k string) bool { got = append(got, k); return true })
			i, _ := slices.BinarySearch(sorted, from)
			if !slices.Equal(got, sorted[i:]) {
				t.Fatalf("ascend(%q): %d keys, want %d", from, len(got), len(sorted)-i)
			}
		}
	}
	check(t, sorted)
	x.retain(func(k string) bool { return k[len(k)-1] != '7' })
	sorted = slices.DeleteFunc(sorted, func(k string) bool { return k[len(k)-1] == '7' })
	check(t, sorted)
	var stopped []string
	x.ascend("", func(k string) bool { stopped = append(stopped, k); return len(stopped) < 3 })
	if !slices.Equal(stopped, sorted[:3]) {
		t.Fatalf("ascend stopping after 3: %v, want %v", stopped, sorted[:3])
	}
}
