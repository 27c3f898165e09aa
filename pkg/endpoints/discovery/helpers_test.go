package discovery

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/server"
)

var crud = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// fixture is a group-version as a server of the chain would add it.
type fixture struct {
	gv        schema.GroupVersion
	resources []metav1.APIResource
	opts      []Option
}

func coreV1() fixture {
	return fixture{gv: schema.GroupVersion{Version: "v1"}, resources: []metav1.APIResource{
		{Name: "configmaps", SingularName: "configmap", Namespaced: true, Kind: "ConfigMap", Verbs: crud, ShortNames: []string{"cm"}},
		{Name: "configmaps/status", Namespaced: true, Kind: "ConfigMap", Verbs: []string{"get", "patch", "update"}},
		{Name: "namespaces", SingularName: "namespace", Kind: "Namespace", Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}, ShortNames: []string{"ns"}},
		{Name: "namespaces/finalize", Kind: "Namespace", Verbs: []string{"update"}},
		{Name: "namespaces/status", Kind: "Namespace", Verbs: []string{"get", "patch", "update"}},
	}}
}

func appsV1() fixture {
	return fixture{gv: schema.GroupVersion{Group: "apps", Version: "v1"}, resources: []metav1.APIResource{
		{Name: "deployments", SingularName: "deployment", Namespaced: true, Kind: "Deployment", Verbs: crud, ShortNames: []string{"deploy"}, Categories: []string{"all"}},
		{Name: "deployments/scale", Namespaced: true, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}},
		{Name: "deployments/status", Namespaced: true, Kind: "Deployment", Verbs: []string{"get", "patch", "update"}},
	}}
}

func coordinationV1() fixture {
	return fixture{gv: schema.GroupVersion{Group: "coordination.k8s.io", Version: "v1"}, resources: []metav1.APIResource{
		{Name: "leases", SingularName: "lease", Namespaced: true, Kind: "Lease", Verbs: crud},
	}}
}

func eventsV1() fixture {
	return fixture{gv: schema.GroupVersion{Group: "events.k8s.io", Version: "v1"}, resources: []metav1.APIResource{
		{Name: "events", SingularName: "event", Namespaced: true, Kind: "Event", Verbs: crud, ShortNames: []string{"ev"}},
	}}
}

func apiextensionsV1() fixture {
	return fixture{gv: schema.GroupVersion{Group: "apiextensions.k8s.io", Version: "v1"}, resources: []metav1.APIResource{
		{Name: "customresourcedefinitions", SingularName: "customresourcedefinition", Kind: "CustomResourceDefinition", Verbs: crud, ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"}},
		{Name: "customresourcedefinitions/status", Kind: "CustomResourceDefinition", Verbs: []string{"get", "patch", "update"}},
	}}
}

func apiregistrationV1() fixture {
	return fixture{gv: schema.GroupVersion{Group: "apiregistration.k8s.io", Version: "v1"}, resources: []metav1.APIResource{
		{Name: "apiservices", SingularName: "apiservice", Kind: "APIService", Verbs: crud, Categories: []string{"api-extensions"}},
		{Name: "apiservices/status", Kind: "APIService", Verbs: []string{"get", "patch", "update"}},
	}}
}

// crontabs is a CRD-like group served in two versions.
func crontabs(version string) fixture {
	return fixture{gv: schema.GroupVersion{Group: "stable.example.com", Version: version}, resources: []metav1.APIResource{
		{Name: "crontabs", SingularName: "crontab", Namespaced: true, Kind: "CronTab", Verbs: crud, ShortNames: []string{"ct"}, Categories: []string{"all"}},
		{Name: "crontabs/status", Namespaced: true, Kind: "CronTab", Verbs: []string{"get", "patch", "update"}},
	}, opts: []Option{WithResponseKindGroupVersion()}}
}

// zooWidgets is a second CRD-like group, after stable.example.com by name.
func zooWidgets() fixture {
	return fixture{gv: schema.GroupVersion{Group: "zoo.example.com", Version: "v1alpha1"}, resources: []metav1.APIResource{
		{Name: "widgets", SingularName: "widget", Kind: "Widget", Verbs: crud},
	}, opts: []Option{WithResponseKindGroupVersion()}}
}

func allFixtures() []fixture {
	return []fixture{
		crontabs("v1beta1"), zooWidgets(), coreV1(), eventsV1(), apiextensionsV1(),
		crontabs("v1"), coordinationV1(), appsV1(), apiregistrationV1(),
	}
}

func newManager(t testing.TB, cfg Config, fs ...fixture) *Manager {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if err := m.AddGroupVersion(f.gv, f.resources, f.opts...); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// resourceListHandler stands in for the installer: it serves gv's
// APIResourceList at its root and a 404 Status below it.
func resourceListHandler(f fixture) (root string, h http.Handler) {
	root = "/apis/" + f.gv.String()
	if f.gv.Group == "" {
		root = "/api/" + f.gv.Version
	}
	body, err := json.Marshal(&metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: f.gv.String(),
		APIResources: f.resources,
	})
	if err != nil {
		panic(err)
	}
	return root, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != root && r.URL.Path != root+"/" {
			handlers.NotFoundInRoot(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

// chain is a three-server chain, as the app builds it: the aggregator (head,
// owning the Manager) -> the core server (built-in groups) -> the
// apiextensions server (CRD groups) -> not-found.
type chain struct {
	m               *Manager
	head, core, ext *server.GenericServer
	srv             *httptest.Server
}

func builtin(f fixture) bool {
	_, ok := builtinGroupPriorities[f.gv.Group]
	return ok
}

func newChain(t *testing.T, cfg Config, fs ...fixture) *chain {
	t.Helper()
	scfg := server.NewConfig(nil)
	completed, err := scfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	ext, err := completed.New("apiextensions-apiserver", server.NewEmptyDelegate(server.NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	core, err := completed.New("kube-apiserver", ext)
	if err != nil {
		t.Fatal(err)
	}
	head, err := completed.New("kube-aggregator", core)
	if err != nil {
		t.Fatal(err)
	}
	m := newManager(t, cfg, fs...)
	m.Install(head.Handler().NonRESTMux)
	owners := map[string]bool{}
	for _, f := range fs {
		owner := ext
		if builtin(f) {
			owner = core
			if !owners[f.gv.Group] {
				owners[f.gv.Group] = true
				m.InstallGroupRoot(core.Handler(), f.gv.Group)
			}
		}
		owner.Handler().HandleREST(resourceListHandler(f))
	}
	c := &chain{m: m, head: head, core: core, ext: ext, srv: httptest.NewServer(head.Handler())}
	t.Cleanup(c.srv.Close)
	return c
}
