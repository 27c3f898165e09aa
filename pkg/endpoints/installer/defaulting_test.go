package installer

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	kapirest "github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

// plainStrategy stores pod templates as they come: whatever defaults they
// get come from decoding. Its validation requires the defaulted fields
// (as upstream's does), so that an object that reaches the strategy
// undefaulted is rejected, whatever a later read would show.
type plainStrategy struct{}

func (plainStrategy) NamespaceScoped() bool                                            { return true }
func (plainStrategy) PrepareForCreate(context.Context, runtime.Object)                 {}
func (plainStrategy) PrepareForUpdate(context.Context, runtime.Object, runtime.Object) {}
func (plainStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return requireDefaults(obj.(*corev1.PodTemplate))
}
func (plainStrategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return requireDefaults(obj.(*corev1.PodTemplate))
}

func requireDefaults(pt *corev1.PodTemplate) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("template", "spec")
	if pt.Template.Spec.RestartPolicy == "" {
		errs = append(errs, field.Required(spec.Child("restartPolicy"), ""))
	}
	for i, c := range pt.Template.Spec.Containers {
		p := spec.Child("containers").Index(i)
		if c.ImagePullPolicy == "" {
			errs = append(errs, field.Required(p.Child("imagePullPolicy"), ""))
		}
		for j, port := range c.Ports {
			if port.Protocol == "" {
				errs = append(errs, field.Required(p.Child("ports").Index(j).Child("protocol"), ""))
			}
		}
	}
	return errs
}

func (plainStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (plainStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (plainStrategy) Canonicalize(runtime.Object)    {}
func (plainStrategy) AllowCreateOnUpdate() bool      { return true }
func (plainStrategy) AllowUnconditionalUpdate() bool { return true }

// TestDecodingDefaultsEveryPath checks that the scheme's defaults (here
// core/v1 PodTemplate's) reach the stored object through every write path
// (create, update, JSON, merge, strategic and apply patches) and every
// read of an object stored without them, as upstream: its handlers decode
// (and so default) request bodies and patched objects, the field manager
// defaults applied objects, and the storage codec defaults what it reads.
func TestDecodingDefaultsEveryPath(t *testing.T) {
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
	// A template container as a client writes it: no pull policy, no
	// termination message path, no port protocol.
	container := func(name string) string {
		return `{"name":"` + name + `","image":"nginx:1.25","ports":[{"containerPort":80}]}`
	}
	template := func(name string, containers ...string) string {
		list := ""
		for i, c := range containers {
			if i > 0 {
				list += ","
			}
			list += c
		}
		return `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"` + name + `"},"template":{"spec":{"containers":[` + list + `]}}}`
	}
	// check decodes a response and checks that each named container was
	// defaulted, and the spec too.
	check := func(t *testing.T, what string, r response, wantCode int, names ...string) {
		t.Helper()
		if r.code != wantCode {
			t.Fatalf("%s: got %d %s, want %d", what, r.code, r.body, wantCode)
		}
		var pt corev1.PodTemplate
		if err := json.Unmarshal(r.body, &pt); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defaulted(t, what, &pt, names...)
	}

	check(t, "create", ts.do(t, "POST", base, []byte(template("a", container("c1"))), "Content-Type", "application/json"), 201, "c1")
	check(t, "update", ts.do(t, "PUT", base+"/a", []byte(template("a", container("c1"), container("c2"))), "Content-Type", "application/json"), 200, "c1", "c2")

	// Each patch adds a container written without defaults.
	jsonPatch := `[{"op":"add","path":"/template/spec/containers/-","value":` + container("c3") + `}]`
	check(t, "json patch", ts.do(t, "PATCH", base+"/a", []byte(jsonPatch), "Content-Type", "application/json-patch+json"), 200, "c1", "c2", "c3")
	mergePatch := `{"template":{"spec":{"containers":[` + container("c4") + `]}}}`
	check(t, "merge patch", ts.do(t, "PATCH", base+"/a", []byte(mergePatch), "Content-Type", "application/merge-patch+json"), 200, "c4")
	strategicPatch := `{"template":{"spec":{"containers":[` + container("c5") + `]}}}`
	check(t, "strategic merge patch", ts.do(t, "PATCH", base+"/a", []byte(strategicPatch), "Content-Type", "application/strategic-merge-patch+json"), 200, "c4", "c5")
	check(t, "apply (create)", ts.do(t, "PATCH", base+"/b?fieldManager=test", []byte(template("b", container("c6"))), "Content-Type", "application/apply-patch+yaml"), 201, "c6")
	check(t, "apply (update)", ts.do(t, "PATCH", base+"/b?fieldManager=test", []byte(template("b", container("c6"), container("c7"))), "Content-Type", "application/apply-patch+yaml"), 200, "c6", "c7")

	// An object stored without defaults (written below the handlers, as an
	// older server would have) is defaulted when read.
	raw := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "default"},
		Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c8", Image: "nginx:1.25", Ports: []corev1.ContainerPort{{ContainerPort: 80}}}}}},
	}
	if err := store.Storage.Create(context.Background(), "/podtemplates/default/old", raw, &corev1.PodTemplate{}); err != nil {
		t.Fatal(err)
	}
	check(t, "get of an undefaulted stored object", ts.do(t, "GET", base+"/old", nil), 200, "c8")
	var list corev1.PodTemplateList
	r := ts.do(t, "GET", base, nil)
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Items) != 3 {
		t.Fatalf("list: got %d %s (%v), want three templates", r.code, r.body, err)
	}
	for i := range list.Items {
		defaulted(t, "list item "+list.Items[i].Name, &list.Items[i])
	}
}

// defaulted checks the template's spec defaults and those of the named
// containers (all containers when none is named).
func defaulted(t *testing.T, what string, pt *corev1.PodTemplate, names ...string) {
	t.Helper()
	spec := pt.Template.Spec
	if spec.RestartPolicy != corev1.RestartPolicyAlways || spec.DNSPolicy != corev1.DNSClusterFirst || spec.SchedulerName != corev1.DefaultSchedulerName ||
		spec.SecurityContext == nil || spec.TerminationGracePeriodSeconds == nil {
		t.Errorf("%s: spec not defaulted: %+v", what, spec)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	found := 0
	for _, c := range spec.Containers {
		if len(names) > 0 && !want[c.Name] {
			continue
		}
		found++
		if c.ImagePullPolicy != corev1.PullIfNotPresent || c.TerminationMessagePath != corev1.TerminationMessagePathDefault ||
			c.TerminationMessagePolicy != corev1.TerminationMessageReadFile || len(c.Ports) != 1 || c.Ports[0].Protocol != corev1.ProtocolTCP {
			t.Errorf("%s: container %s not defaulted: %+v", what, c.Name, c)
		}
	}
	if len(names) > 0 && found != len(names) {
		t.Errorf("%s: got containers %+v, want %v among them", what, spec.Containers, names)
	}
}
