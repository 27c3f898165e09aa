package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// copyDoublingPatch is a JSON patch of n operations, each copying the
// whole of .data into a new key of .data: every operation doubles the
// object.
func copyDoublingPatch(n int) []byte {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"copy","from":"/data","path":"/data/c%d"}`, i)
	}
	return []byte("[" + strings.Join(ops, ",") + "]")
}

// A JSON patch whose copy operations double the object is refused once the
// copies add 3 MiB (kube-apiserver's JSONPatchMaxCopyBytes), with
// upstream's 422 for a JSON patch that fails to apply (its Status carries
// no more than "the server rejected our request due to an error in our
// request": NewGenericServerResponse(422, ...) in upstream's
// handlers/patch.go); the server never builds the object the patch
// describes. Without the limit, the 16-copy patch would reach the storage
// (64 MiB, a 413). The 60-operation patch
// (2.6 KB) would need 2^60 KiB; the allocations of the whole test process,
// server included, stay far below a GiB.
func TestJSONPatchCopyAmplification(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.newNamespace(t)
		item := "/api/v1/namespaces/" + ns + "/configmaps/amp"
		seed := `{"metadata":{"name":"amp"},"data":{"a":"` + strings.Repeat("x", 1024) + `"}}`
		if r := e.raw(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", []byte(seed)); r.code != http.StatusCreated {
			t.Fatalf("create: got %d %s", r.code, r.body)
		}
		for _, n := range []int{16, 60} {
			patch := copyDoublingPatch(n)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r := e.raw(t, http.MethodPatch, item, patch, "Content-Type", "application/json-patch+json")
			runtime.ReadMemStats(&after)
			if r.code != http.StatusUnprocessableEntity {
				t.Fatalf("%d copies (%d bytes): got %d %.300s, want 422", n, len(patch), r.code, r.body)
			}
			if st := decodeStatus(t, r.body); st.Reason != "Invalid" || st.Message != "the server rejected our request due to an error in our request" {
				t.Errorf("%d copies: got %s %q, want upstream's 422 Invalid", n, st.Reason, st.Message)
			}
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<30 {
				t.Errorf("%d copies: the process allocated %d MiB during the request, want far less than a GiB", n, grown>>20)
			}
		}
		// The object is unchanged.
		r := e.raw(t, http.MethodGet, item, nil)
		var cm struct{ Data map[string]string }
		if err := json.Unmarshal(r.body, &cm); err != nil || len(cm.Data) != 1 {
			t.Errorf("after the refused patches: got %d %v keys (%v), want the one key", r.code, len(cm.Data), err)
		}
	})
}

// A JSON merge patch or JSON patch whose result is larger than any request
// body may be is a 413 before anything decodes it; copies within the
// 3 MiB limit are applied as usual.
func TestPatchedObjectSizeBound(t *testing.T) {
	forEachBackend(t, func(t *testing.T, e *env) {
		ns := e.newNamespace(t)
		item := "/api/v1/namespaces/" + ns + "/configmaps/big"
		// Just under the 1 MiB a ConfigMap's data may hold.
		seed := `{"metadata":{"name":"big"},"data":{"a":"` + strings.Repeat("x", 1<<20-1024) + `"}}`
		if r := e.raw(t, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", []byte(seed)); r.code != http.StatusCreated {
			t.Fatalf("create: got %d %.200s", r.code, r.body)
		}
		// 1 MiB object + 2.5 MiB of new data: over the 3 MiB limit.
		merge := `{"data":{"b":"` + strings.Repeat("y", 5<<19) + `"}}`
		r := e.raw(t, http.MethodPatch, item, []byte(merge), "Content-Type", "application/merge-patch+json")
		if r.code != http.StatusRequestEntityTooLarge || !strings.Contains(decodeStatus(t, r.body).Message, "the patched object is ") {
			t.Errorf("merge patch: got %d %.300s, want 413 the patched object is ...", r.code, r.body)
		}
		// Three copies of ~1 MiB: within the 3 MiB copy limit, over the
		// size one.
		json2 := `[{"op":"copy","from":"/data/a","path":"/data/b"},{"op":"copy","from":"/data/a","path":"/data/c"},{"op":"copy","from":"/data/a","path":"/data/d"}]`
		r = e.raw(t, http.MethodPatch, item, []byte(json2), "Content-Type", "application/json-patch+json")
		if r.code != http.StatusRequestEntityTooLarge || !strings.Contains(decodeStatus(t, r.body).Message, "the patched object is ") {
			t.Errorf("json patch: got %d %.300s, want 413 the patched object is ...", r.code, r.body)
		}
		// A small copy is applied.
		small := `[{"op":"add","path":"/data/s","value":"v"},{"op":"copy","from":"/data/s","path":"/data/t"}]`
		if r = e.raw(t, http.MethodPatch, item, []byte(small), "Content-Type", "application/json-patch+json"); r.code != http.StatusOK {
			t.Errorf("small copy: got %d %.300s, want 200", r.code, r.body)
		}
	})
}
