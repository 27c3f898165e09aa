package installer

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/admission"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	kapirest "github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

// labeller is a mutating plugin that labels every object it admits with
// the operation, and records what it saw.
type labeller struct {
	mu   sync.Mutex
	seen []admission.Attributes
}

func (*labeller) Name() string                     { return "Labeller" }
func (*labeller) Handles(admission.Operation) bool { return true }
func (l *labeller) Admit(_ context.Context, a admission.Attributes) error {
	l.mu.Lock()
	l.seen = append(l.seen, a)
	l.mu.Unlock()
	if a.Object == nil {
		return nil
	}
	m, err := meta.Accessor(a.Object)
	if err != nil {
		return err
	}
	labels := m.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["admitted"] = string(a.Operation)
	m.SetLabels(labels)
	return nil
}

func (l *labeller) last() admission.Attributes {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[len(l.seen)-1]
}

// requireLabel is a validating plugin that refuses objects the mutating
// phase did not label: it proves validation sees the mutated object.
type requireLabel struct{}

func (requireLabel) Name() string                        { return "RequireLabel" }
func (requireLabel) Handles(op admission.Operation) bool { return op != admission.Delete }
func (requireLabel) Validate(_ context.Context, a admission.Attributes) error {
	m, err := meta.Accessor(a.Object)
	if err != nil {
		return err
	}
	if m.GetLabels()["admitted"] != string(a.Operation) {
		return apierrors.NewForbidden(a.Resource.GroupResource(), a.Name, errNotAdmitted)
	}
	return nil
}

type admissionError string

func (e admissionError) Error() string { return string(e) }

const errNotAdmitted = admissionError("not labelled by mutating admission")

// TestMutatingAdmissionEveryWritePath checks that mutating admission runs
// on every write path (create, update, each patch type, apply creating and
// updating, delete), that its change is what is stored, that validating
// admission sees the mutated object, and that an update of a missing
// object is admitted as a create, as upstream's handlers do.
func TestMutatingAdmissionEveryWritePath(t *testing.T) {
	store, err := generic.NewStore(registrytest.Options(t), corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                  func() runtime.Object { return &corev1.PodTemplate{} },
		NewListFunc:              func() runtime.Object { return &corev1.PodTemplateList{} },
		DefaultQualifiedResource: corev1.Resource("podtemplates"),
		CreateStrategy:           plainStrategy{},
		UpdateStrategy:           plainStrategy{},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Destroy)

	l := &labeller{}
	chain := admission.NewChain(nil)
	chain.SetPlugins(l, requireLabel{})

	cfg := server.NewConfig(slog.New(slog.DiscardHandler))
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *server.Config) http.Handler {
		h = filters.WithWarningRecorder(h, c.Logger)
		return filters.WithRequestInfo(h, request.NewResolver(), c.Logger)
	}
	completed, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	s, err := completed.New("test", server.NewEmptyDelegate(http.NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	g := &APIGroupVersion{
		GroupVersion:      schema.GroupVersion{Version: "v1"},
		Storage:           map[string]kapirest.Storage{"podtemplates": store},
		FieldManagers:     fieldmanager.NewFactory(nil),
		Admission:         chain,
		MinRequestTimeout: time.Minute,
		Logger:            slog.New(slog.DiscardHandler),
	}
	if _, err := g.Install(s.Handler()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s.Handler())
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ts := &testServer{srv: srv}

	const base = "/api/v1/namespaces/default/podtemplates"
	template := func(name, label string) string {
		return `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"` + name + `","labels":{"from":"` + label + `"}},"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}`
	}
	// check verifies the response and the stored object carry the label
	// of op, and that the plugin saw op with the options of the request.
	check := func(what string, r response, wantCode int, name string, op admission.Operation, wantOptions string) {
		t.Helper()
		if r.code != wantCode {
			t.Fatalf("%s: got %d %s, want %d", what, r.code, r.body, wantCode)
		}
		var pt corev1.PodTemplate
		if err := json.Unmarshal(r.body, &pt); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if pt.Labels["admitted"] != string(op) {
			t.Errorf("%s: response labels %v, want admitted=%s", what, pt.Labels, op)
		}
		got := ts.do(t, "GET", base+"/"+name, nil)
		var stored corev1.PodTemplate
		if err := json.Unmarshal(got.body, &stored); err != nil || stored.Labels["admitted"] != string(op) {
			t.Errorf("%s: stored labels %v (%v), want admitted=%s", what, stored.Labels, err, op)
		}
		a := l.last()
		if a.Operation != op || a.Name != name || a.Namespace != "default" || a.Resource.Resource != "podtemplates" {
			t.Errorf("%s: plugin saw %s %s/%s %v, want %s default/%s podtemplates", what, a.Operation, a.Namespace, a.Name, a.Resource, op, name)
		}
		if a.Options == nil || a.Options.GetObjectKind().GroupVersionKind().Kind != wantOptions {
			t.Errorf("%s: plugin saw options %#v, want %s", what, a.Options, wantOptions)
		}
		if (op == admission.Update) != (a.OldObject != nil) {
			t.Errorf("%s: old object %v for %s", what, a.OldObject != nil, op)
		}
	}

	json := "application/json"
	check("create", ts.do(t, "POST", base, []byte(template("a", "create")), "Content-Type", json), 201, "a", admission.Create, "CreateOptions")
	check("update", ts.do(t, "PUT", base+"/a", []byte(template("a", "update")), "Content-Type", json), 200, "a", admission.Update, "UpdateOptions")
	// A create that a PUT or an apply turns into is admitted with
	// CreateOptions (upstream's updateToCreateOptions/patchToCreateOptions;
	// kube-apiserver v1.37.2's webhook reviews say so, see test/e2e
	// TestAdmissionReviewsAsUpstream).
	check("update creating", ts.do(t, "PUT", base+"/b", []byte(template("b", "put")), "Content-Type", json), 201, "b", admission.Create, "CreateOptions")
	check("json patch", ts.do(t, "PATCH", base+"/a", []byte(`[{"op":"replace","path":"/metadata/labels/from","value":"jp"}]`), "Content-Type", "application/json-patch+json"), 200, "a", admission.Update, "UpdateOptions")
	check("merge patch", ts.do(t, "PATCH", base+"/a", []byte(`{"metadata":{"labels":{"from":"mp","admitted":null}}}`), "Content-Type", "application/merge-patch+json"), 200, "a", admission.Update, "UpdateOptions")
	check("strategic patch", ts.do(t, "PATCH", base+"/a", []byte(`{"metadata":{"labels":{"from":"smp"}}}`), "Content-Type", "application/strategic-merge-patch+json"), 200, "a", admission.Update, "UpdateOptions")
	check("apply creating", ts.do(t, "PATCH", base+"/c?fieldManager=t", []byte(template("c", "apply")), "Content-Type", "application/apply-patch+yaml"), 201, "c", admission.Create, "CreateOptions")
	check("apply updating", ts.do(t, "PATCH", base+"/c?fieldManager=t", []byte(template("c", "apply2")), "Content-Type", "application/apply-patch+yaml"), 200, "c", admission.Update, "UpdateOptions")

	// A dry run is admitted as such, and stores nothing.
	r := ts.do(t, "POST", base+"?dryRun=All", []byte(template("d", "dry")), "Content-Type", json)
	if r.code != 201 || !l.last().DryRun {
		t.Errorf("dry-run create: got %d, plugin saw dryRun=%v", r.code, l.last().DryRun)
	}

	// Delete: the mutating phase sees the object being deleted as the old
	// object (upstream's AdmissionToValidateObjectDeleteFunc, v1.37.2).
	r = ts.do(t, "DELETE", base+"/a", nil)
	if r.code != 200 {
		t.Fatalf("delete: got %d %s", r.code, r.body)
	}
	if a := l.last(); a.Operation != admission.Delete || a.Name != "a" || a.Object != nil || a.OldObject == nil {
		t.Errorf("delete: plugin saw %s %s object=%v old object=%v", a.Operation, a.Name, a.Object != nil, a.OldObject != nil)
	}
	if a := l.last(); a.Options == nil || a.Options.GetObjectKind().GroupVersionKind().Kind != "DeleteOptions" {
		t.Errorf("delete: plugin saw options %#v, want DeleteOptions", a.Options)
	}
}

// TestChainSharedPlugins checks that copies of a Chain share the plugins
// set later, as the servers of the chain rely on.
func TestChainSharedPlugins(t *testing.T) {
	c := admission.NewChain(nil)
	copied := c
	if copied.Mutates(admission.Create) || copied.Handles(admission.Create) {
		t.Fatal("empty chain: handles create")
	}
	c.SetPlugins(&labeller{}, requireLabel{})
	if !copied.Mutates(admission.Create) || !copied.Handles(admission.Create) || copied.Handles(admission.Delete) != false {
		t.Fatalf("copy: mutates %v handles %v handles delete %v", copied.Mutates(admission.Create), copied.Handles(admission.Create), copied.Handles(admission.Delete))
	}
	var zero admission.Chain
	if err := zero.Admit(context.Background(), admission.Attributes{Operation: admission.Create}); err != nil || zero.Mutates(admission.Create) {
		t.Fatalf("zero chain: %v", err)
	}
}
