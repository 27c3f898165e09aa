package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
)

// The json-patch copy limit is kube-apiserver's JSONPatchMaxCopyBytes
// (3 MiB) from the moment the package is loaded: a patch whose copies
// double a 1 KiB value fails after 3 MiB of copies, with json-patch's
// AccumulatedCopySizeError.
func TestJSONPatchCopyLimit(t *testing.T) {
	if jsonpatch.AccumulatedCopySizeLimit != 3*1024*1024 {
		t.Fatalf("got AccumulatedCopySizeLimit %d, want 3 MiB", jsonpatch.AccumulatedCopySizeLimit)
	}
	ops := make([]string, 40)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"copy","from":"/d","path":"/d/c%d"}`, i)
	}
	patch, err := jsonpatch.DecodePatch([]byte("[" + strings.Join(ops, ",") + "]"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = patch.Apply([]byte(`{"d":{"a":"` + strings.Repeat("x", 1024) + `"}}`))
	var sizeErr *jsonpatch.AccumulatedCopySizeError
	if !errors.As(err, &sizeErr) || !strings.HasSuffix(err.Error(), "exceeding the limit 3145728") {
		t.Fatalf("got %v, want an AccumulatedCopySizeError at 3145728", err)
	}
}

// A patch attempt whose request is past its deadline (the timeout filter
// has answered 504) does no work: the storage's update gets a Timeout
// error at once, before the patch is applied.
func TestPatcherStopsAfterDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, pt := range []types.PatchType{types.JSONPatchType, types.MergePatchType, types.StrategicMergePatchType, types.ApplyYAMLPatchType} {
		p := &patcher{scope: &RequestScope{}, patchType: pt, patch: []byte(`[]`), name: "a"}
		// The scope has no serializer: getting past the deadline check
		// would panic.
		if _, err := p.UpdatedObject(ctx, nil); !apierrors.IsTimeout(err) {
			t.Errorf("%s: got %v, want a Timeout", pt, err)
		}
	}
	u := &updatedObject{scope: &RequestScope{}}
	if _, err := u.UpdatedObject(ctx, nil); !apierrors.IsTimeout(err) {
		t.Errorf("update: got %v, want a Timeout", err)
	}
}
