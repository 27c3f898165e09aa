package registrytest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// Options returns registry options on a fresh memory backend, closed when
// the test ends.
func Options(t testing.TB) generic.RESTOptions {
	t.Helper()
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	return generic.RESTOptions{Storage: generic.MemoryStorage(b)}
}

// Context returns a request context for resource in group/version (""
// for the core group), in namespace ns ("" for cluster-scoped resources
// and all-namespace requests).
func Context(group, version, resource, ns string) context.Context {
	ctx := request.WithNamespace(context.Background(), ns)
	return request.WithRequestInfo(ctx, &request.RequestInfo{
		IsResourceRequest: true,
		APIPrefix:         apiPrefix(group),
		APIGroup:          group,
		APIVersion:        version,
		Resource:          resource,
		Namespace:         ns,
	})
}

func apiPrefix(group string) string {
	if group == "" {
		return "api"
	}
	return "apis"
}

// Updated is a rest.UpdatedObjectInfo whose update is Obj (a PUT body).
type Updated struct {
	Obj runtime.Object
}

var _ rest.UpdatedObjectInfo = Updated{}

// Preconditions implements rest.UpdatedObjectInfo: none.
func (Updated) Preconditions() *metav1.Preconditions { return nil }

// UpdatedObject implements rest.UpdatedObjectInfo: a copy of Obj.
func (u Updated) UpdatedObject(context.Context, runtime.Object) (runtime.Object, error) {
	return u.Obj.DeepCopyObject(), nil
}

// Mutated is a rest.UpdatedObjectInfo that applies Mutate to a copy of the
// current object (a patch).
type Mutated struct {
	Mutate func(obj runtime.Object)
}

var _ rest.UpdatedObjectInfo = Mutated{}

// Preconditions implements rest.UpdatedObjectInfo: none.
func (Mutated) Preconditions() *metav1.Preconditions { return nil }

// UpdatedObject implements rest.UpdatedObjectInfo.
func (m Mutated) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	obj := old.DeepCopyObject()
	m.Mutate(obj)
	return obj, nil
}

// Status returns err's API status, failing the test if err is not an API
// error.
func Status(t testing.TB, err error) metav1.Status {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		t.Fatalf("got error %v (%T), want an API status error", err, err)
	}
	return st.Status()
}

// Causes returns the "<type> <field>" of each cause of an Invalid error.
func Causes(t testing.TB, err error) []string {
	t.Helper()
	return invalidCauses(t, err, func(c metav1.StatusCause) string { return string(c.Type) + " " + c.Field })
}

// Messages returns the "<field>: <message>" of each cause of an Invalid
// error, in order: what kubectl prints of a validation failure, to compare
// with kube-apiserver's answer to the same request.
func Messages(t testing.TB, err error) []string {
	t.Helper()
	return invalidCauses(t, err, func(c metav1.StatusCause) string { return c.Field + ": " + c.Message })
}

// invalidCauses renders each cause of an Invalid error with render.
func invalidCauses(t testing.TB, err error, render func(metav1.StatusCause) string) []string {
	t.Helper()
	st := Status(t, err)
	if st.Reason != metav1.StatusReasonInvalid {
		t.Fatalf("got reason %q (%v), want Invalid", st.Reason, err)
	}
	var out []string
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			out = append(out, render(c))
		}
	}
	return out
}

// KubectlCauses parses kubectl's report of an Invalid error ("The Kind
// \"name\" is invalid: field: message", or one "* field: message" line per
// cause after "is invalid: ") into the "<field>: <message>" list Messages
// returns, so that a reference server's answer, saved verbatim, can be
// compared with kapi's. Lines that start neither form continue the
// previous message (multi-line CEL errors).
func KubectlCauses(t testing.TB, text string) []string {
	t.Helper()
	text = strings.TrimPrefix(strings.TrimRight(text, "\n"), "Error from server (Invalid): ")
	head, rest, ok := strings.Cut(text, " is invalid: ")
	if !ok || strings.Contains(head, "\n") {
		t.Fatalf("not an Invalid error report: %q", text)
	}
	first, more, _ := strings.Cut(rest, "\n")
	if first != "" {
		return []string{rest}
	}
	var out []string
	for _, line := range strings.Split(more, "\n") {
		if c, ok := strings.CutPrefix(line, "* "); ok {
			out = append(out, c)
		} else if len(out) > 0 {
			out[len(out)-1] += "\n" + line
		} else {
			t.Fatalf("unexpected line %q in %q", line, text)
		}
	}
	return out
}

// Goldens runs, for each dir/NAME.json, a subtest that sends the body
// through send (a create or update in the storage under test) and compares
// the causes of the Invalid error it returns with dir/NAME.txt, kubectl's
// report of a reference server's answer to the same request, kept
// verbatim (see KubectlCauses).
func Goldens(t *testing.T, dir string, send func(t *testing.T, body []byte) error) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden requests in %s: %v", dir, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			answer, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".txt")
			if err != nil {
				t.Fatal(err)
			}
			got, want := Messages(t, send(t, body)), KubectlCauses(t, string(answer))
			if !slices.Equal(got, want) {
				t.Errorf("causes:\n got  %q\n want %q", got, want)
			}
		})
	}
}

// Warnings records the warnings of requests (a warning.Recorder).
type Warnings struct {
	mu   sync.Mutex
	list []string
}

// AddWarning implements warning.Recorder.
func (w *Warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

// List returns the warnings recorded so far.
func (w *Warnings) List() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.list)
}
