package controlplane

import (
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/configmap"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/selfsubjectreview"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// countingOptions are REST options on a fresh memory backend whose
// factory counts the storage it makes and the storage released.
func countingOptions(t *testing.T) (generic.RESTOptions, *atomic.Int32, *atomic.Int32) {
	t.Helper()
	backend := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = backend.Close() })
	var made, released atomic.Int32
	mem := generic.MemoryStorage(backend)
	return generic.RESTOptions{Storage: func(cfg generic.StorageConfig) (storage.Interface, func(), error) {
		st, _, err := mem(cfg)
		if err != nil {
			return nil, nil, err
		}
		made.Add(1)
		return st, func() { released.Add(1) }, nil
	}, Logger: slog.New(slog.DiscardHandler)}, &made, &released
}

func completedConfig(t *testing.T) Config {
	t.Helper()
	c := Config{Logger: slog.New(slog.DiscardHandler)}
	if err := c.complete(); err != nil {
		t.Fatal(err)
	}
	return c
}

// The built-in tables serve the paths, empty namespaces of the resources
// and register the field labels that Install listed by hand before the
// tables (pkg/controlplane/controlplane.go at 100ef0e): the derivation
// from the tables changes none of them.
func TestBuiltinTables(t *testing.T) {
	opts, made, released := countingOptions(t)
	b, err := newStorageBuilder(opts, completedConfig(t), builtinGroups)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.build(); err != nil {
		b.destroy()
		t.Fatal(err)
	}
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			b.destroy()
		}
	})

	wantPaths := map[schema.GroupVersion][]string{
		{Version: "v1"}: {
			"bindings", "componentstatuses", "configmaps", "endpoints", "events", "limitranges", "namespaces",
			"namespaces/finalize", "namespaces/status", "nodes", "nodes/proxy", "nodes/status",
			"persistentvolumeclaims", "persistentvolumeclaims/status", "persistentvolumes", "persistentvolumes/status",
			"pods", "pods/attach", "pods/binding", "pods/ephemeralcontainers", "pods/eviction", "pods/exec", "pods/log",
			"pods/portforward", "pods/proxy", "pods/resize", "pods/status", "podtemplates",
			"replicationcontrollers", "replicationcontrollers/scale", "replicationcontrollers/status",
			"resourcequotas", "resourcequotas/status",
			"secrets", "serviceaccounts", "services", "services/proxy", "services/status",
		},
		{Group: "discovery.k8s.io", Version: "v1"}:      {"endpointslices"},
		{Group: "events.k8s.io", Version: "v1"}:         {"events"},
		{Group: "coordination.k8s.io", Version: "v1"}:   {"leases"},
		{Group: "authentication.k8s.io", Version: "v1"}: {"selfsubjectreviews", "tokenreviews"},
		{Group: "authorization.k8s.io", Version: "v1"}: {
			"localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews",
		},
		{Group: "apps", Version: "v1"}: {
			"controllerrevisions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
			"replicasets", "replicasets/scale", "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status",
		},
		{Group: "batch", Version: "v1"}:       {"cronjobs", "cronjobs/status", "jobs", "jobs/status"},
		{Group: "autoscaling", Version: "v2"}: {"horizontalpodautoscalers", "horizontalpodautoscalers/status"},
		{Group: "autoscaling", Version: "v1"}: {"horizontalpodautoscalers", "horizontalpodautoscalers/status"},
		{Group: "policy", Version: "v1"}:      {"poddisruptionbudgets", "poddisruptionbudgets/status"},
		{Group: "networking.k8s.io", Version: "v1"}: {
			"ingressclasses", "ingresses", "ingresses/status", "ipaddresses", "networkpolicies", "servicecidrs", "servicecidrs/status",
		},
		{Group: "storage.k8s.io", Version: "v1"}: {
			"csidrivers", "csinodes", "csinodes/status", "csistoragecapacities", "storageclasses", "volumeattachments", "volumeattachments/status",
			"volumeattributesclasses",
		},
		{Group: "scheduling.k8s.io", Version: "v1"}: {"priorityclasses"},
		{Group: "node.k8s.io", Version: "v1"}:       {"runtimeclasses"},
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}: {
			"flowschemas", "flowschemas/status", "prioritylevelconfigurations", "prioritylevelconfigurations/status",
		},
		{Group: "admissionregistration.k8s.io", Version: "v1"}: {
			"mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
			"mutatingwebhookconfigurations", "validatingadmissionpolicies", "validatingadmissionpolicies/status",
			"validatingadmissionpolicybindings", "validatingwebhookconfigurations",
		},
		{Group: "rbac.authorization.k8s.io", Version: "v1"}: {"clusterrolebindings", "clusterroles", "rolebindings", "roles"},
		{Group: "certificates.k8s.io", Version: "v1"}: {
			"certificatesigningrequests", "certificatesigningrequests/approval", "certificatesigningrequests/status", "clustertrustbundles",
			"podcertificaterequests", "podcertificaterequests/status",
		},
		{Group: "resource.k8s.io", Version: "v1"}:         {"deviceclasses", "devicetaintrules", "devicetaintrules/status", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates", "resourceslices"},
		{Group: "storagemigration.k8s.io", Version: "v1"}: {"storageversionmigrations", "storageversionmigrations/status"},
	}
	var gotOrder []schema.GroupVersion
	for _, g := range b.groups {
		for _, v := range g.versions {
			gv := schema.GroupVersion{Group: g.name, Version: v.name}
			gotOrder = append(gotOrder, gv)
			m, err := b.groupVersionStorage(g.name, v)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, wantPaths[gv]) {
				t.Errorf("%s: got paths %v, want %v", gv, got, wantPaths[gv])
			}
		}
	}
	// Install's order, which discovery and OpenAPI see.
	wantOrder := []schema.GroupVersion{
		{Version: "v1"}, {Group: "discovery.k8s.io", Version: "v1"}, {Group: "events.k8s.io", Version: "v1"},
		{Group: "coordination.k8s.io", Version: "v1"}, {Group: "authentication.k8s.io", Version: "v1"},
		{Group: "authorization.k8s.io", Version: "v1"},
		{Group: "apps", Version: "v1"},
		{Group: "batch", Version: "v1"}, {Group: "autoscaling", Version: "v2"}, {Group: "autoscaling", Version: "v1"},
		{Group: "policy", Version: "v1"},
		{Group: "networking.k8s.io", Version: "v1"}, {Group: "storage.k8s.io", Version: "v1"},
		{Group: "scheduling.k8s.io", Version: "v1"}, {Group: "node.k8s.io", Version: "v1"},
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"},
		{Group: "admissionregistration.k8s.io", Version: "v1"},
		{Group: "rbac.authorization.k8s.io", Version: "v1"},
		{Group: "certificates.k8s.io", Version: "v1"},
		{Group: "resource.k8s.io", Version: "v1"},
		{Group: "storagemigration.k8s.io", Version: "v1"},
	}
	if !slices.Equal(gotOrder, wantOrder) {
		t.Errorf("got group-versions %v, want %v", gotOrder, wantOrder)
	}

	content := b.namespacedContent()
	var gotContent []string
	for gr, c := range content {
		gotContent = append(gotContent, gr.String())
		// Every built-in namespaced resource deletes collections
		// (services too, which release their IPs and ports item by item
		// inside their DeleteCollection).
		if _, isOneByOne := c.(oneByOne); isOneByOne {
			t.Errorf("%s: emptied one by one, want a collection delete", gr)
		}
	}
	slices.Sort(gotContent)
	wantContent := []string{
		"configmaps", "endpoints", "endpointslices.discovery.k8s.io", "events", "leases.coordination.k8s.io",
		"limitranges", "persistentvolumeclaims", "pods", "podtemplates", "replicationcontrollers", "resourcequotas",
		"secrets", "serviceaccounts", "services",
		"controllerrevisions.apps", "daemonsets.apps", "deployments.apps", "replicasets.apps", "statefulsets.apps",
		"cronjobs.batch", "horizontalpodautoscalers.autoscaling", "jobs.batch", "poddisruptionbudgets.policy",
		"ingresses.networking.k8s.io", "networkpolicies.networking.k8s.io", "csistoragecapacities.storage.k8s.io",
		"rolebindings.rbac.authorization.k8s.io", "roles.rbac.authorization.k8s.io",
		"resourceclaims.resource.k8s.io", "resourceclaimtemplates.resource.k8s.io",
		"podcertificaterequests.certificates.k8s.io",
	}
	slices.Sort(wantContent)
	if !slices.Equal(gotContent, wantContent) {
		t.Errorf("got namespace content %v, want %v", gotContent, wantContent)
	}

	conversions, err := b.fieldLabelConversions()
	if err != nil {
		t.Fatal(err)
	}
	var gotKinds []string
	for _, c := range conversions {
		gotKinds = append(gotKinds, c.kind.String())
	}
	slices.Sort(gotKinds)
	wantKinds := []string{
		"/v1, Kind=Event", "/v1, Kind=Namespace", "/v1, Kind=Node", "/v1, Kind=Pod", "/v1, Kind=ReplicationController",
		"/v1, Kind=Secret", "/v1, Kind=Service", "batch/v1, Kind=Job",
		"certificates.k8s.io/v1, Kind=CertificateSigningRequest", "certificates.k8s.io/v1, Kind=ClusterTrustBundle",
		"certificates.k8s.io/v1, Kind=PodCertificateRequest", "events.k8s.io/v1, Kind=Event", "resource.k8s.io/v1, Kind=ResourceSlice",
	}
	if !slices.Equal(gotKinds, wantKinds) {
		t.Errorf("got field label conversions for %v, want %v", gotKinds, wantKinds)
	}

	// The services' allocators and the API server leases are storage made
	// outside the lines; destroy releases it with the rest.
	if _, err := servicesOf(b); err != nil {
		t.Fatal(err)
	}
	b.destroy()
	destroyed = true
	if made.Load() == 0 || released.Load() != made.Load() {
		t.Errorf("released %d of %d storages, want all", released.Load(), made.Load())
	}
}

// A table may serve one storage in several versions (or groups): the view
// is installed, but neither destroyed nor emptied of namespaces itself.
// Subresources are installed under their resource.
func TestSharedStorageAndSubresources(t *testing.T) {
	opts, made, released := countingOptions(t)
	v1 := schema.GroupVersionResource{Group: "test.kapi.dev", Version: "v1", Resource: "configmaps"}
	var views, viewsDestroyed atomic.Int32
	groups := []apiGroup{{name: "test.kapi.dev", versions: []apiVersion{
		{name: "v2", resources: []apiResource{
			{name: "configmaps", storage: viewOf(v1, func(s *generic.Store) *recordingView {
				views.Add(1)
				return &recordingView{Store: s, destroyed: &viewsDestroyed}
			})},
		}},
		{name: "v1", resources: []apiResource{
			{name: "configmaps", storage: func(b *storageBuilder) (resourceStorage, error) {
				st, err := configmap.NewREST(b.opts)
				if err != nil {
					return resourceStorage{}, err
				}
				return resourceStorage{storage: st, subresources: map[string]rest.Storage{"status": generic.NewStatusREST(st, nil)}}, nil
			}},
		}},
	}}}
	b, err := newStorageBuilder(opts, completedConfig(t), groups)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.build(); err != nil {
		b.destroy()
		t.Fatal(err)
	}
	v1Paths, err := b.groupVersionStorage("test.kapi.dev", groups[0].versions[1])
	if err != nil {
		t.Fatal(err)
	}
	v2Paths, err := b.groupVersionStorage("test.kapi.dev", groups[0].versions[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(v1Paths)); !slices.Equal(got, []string{"configmaps", "configmaps/status"}) {
		t.Errorf("got v1 paths %v, want configmaps and its status", got)
	}
	if v, ok := v2Paths["configmaps"].(*recordingView); !ok || v.Store != v1Paths["configmaps"] || views.Load() != 1 {
		t.Errorf("v2 serves %#v (made %d times), want a view of v1's storage %p made once", v2Paths["configmaps"], views.Load(), v1Paths["configmaps"])
	}
	if got := slices.Collect(maps.Keys(b.namespacedContent())); len(got) != 1 || got[0] != v1.GroupResource() {
		t.Errorf("got namespace content %v, want the resource once", got)
	}
	b.destroy()
	if made.Load() != 1 || released.Load() != 1 || viewsDestroyed.Load() != 0 {
		t.Errorf("made %d storages, released %d, destroyed the view %d times; want one, one, none", made.Load(), released.Load(), viewsDestroyed.Load())
	}
}

func TestStorageBuilderErrors(t *testing.T) {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	other := schema.GroupVersionResource{Version: "v1", Resource: "others"}
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		resources []apiResource
		newErr    string // from newStorageBuilder
		buildErr  string // from build
	}{
		{
			name: "declared twice",
			resources: []apiResource{
				{name: "configmaps", storage: storeOf(configmap.NewREST)},
				{name: "configmaps", storage: storeOf(configmap.NewREST)},
			},
			newErr: "/v1, Resource=configmaps is declared twice",
		},
		{
			name:      "no storage",
			resources: []apiResource{{name: "configmaps"}},
			newErr:    "/v1, Resource=configmaps has no storage",
		},
		{
			name: "depends on itself",
			resources: []apiResource{
				{name: "configmaps", storage: viewOf(other, func(s *generic.Store) *generic.Store { return s })},
				{name: "others", storage: viewOf(cm, func(s *generic.Store) *generic.Store { return s })},
			},
			buildErr: "the storage of /v1, Resource=configmaps depends on itself",
		},
		{
			name:      "depends on a resource no table serves",
			resources: []apiResource{{name: "configmaps", storage: viewOf(other, func(s *generic.Store) *generic.Store { return s })}},
			buildErr:  "no table serves /v1, Resource=others",
		},
		{
			name: "depends on storage of another type",
			resources: []apiResource{
				{name: "configmaps", storage: viewOf(other, func(s *generic.Store) *generic.Store { return s })},
				{name: "others", storage: withConfig(func(Config) rest.Storage { return selfsubjectreview.NewREST() })},
			},
			buildErr: "the storage of /v1, Resource=others is a *selfsubjectreview.REST, not a *generic.Store",
		},
		{
			name: "storage fails",
			resources: []apiResource{
				{name: "configmaps", storage: storeOf(configmap.NewREST)},
				{name: "others", storage: func(*storageBuilder) (resourceStorage, error) { return resourceStorage{}, boom }},
			},
			buildErr: "others: boom",
		},
		{
			name: "no scope",
			resources: []apiResource{
				{name: "configmaps", storage: storeOf(configmap.NewREST)},
				{name: "others", storage: func(b *storageBuilder) (resourceStorage, error) {
					st, err := configmap.NewREST(b.opts)
					return resourceStorage{storage: unscoped{st}}, err
				}},
			},
			buildErr: "does not tell its scope",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, made, released := countingOptions(t)
			b, err := newStorageBuilder(opts, completedConfig(t), []apiGroup{{versions: []apiVersion{{name: "v1", resources: tc.resources}}}})
			if tc.newErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.newErr) {
					t.Fatalf("got %v, want %q", err, tc.newErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			err = b.build()
			if err == nil || !strings.Contains(err.Error(), tc.buildErr) {
				t.Errorf("got %v, want %q", err, tc.buildErr)
			}
			if tc.name == "storage fails" && !errors.Is(err, boom) {
				t.Errorf("got %v, want it to wrap the storage's error", err)
			}
			b.destroy()
			if released.Load() != made.Load() {
				t.Errorf("released %d of %d storages after a failed build, want all", released.Load(), made.Load())
			}
		})
	}
}

// recordingView serves a store under another version; it records its Destroy
// calls.
type recordingView struct {
	*generic.Store
	destroyed *atomic.Int32
}

func (v *recordingView) Destroy() { v.destroyed.Add(1) }

// unscoped hides a storage's scope.
type unscoped struct{ st rest.Storage }

func (u unscoped) New() runtime.Object { return u.st.New() }
func (u unscoped) Destroy()            { u.st.Destroy() }
