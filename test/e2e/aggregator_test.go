package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/testaudit"
	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

var (
	apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	gadgetGVR     = schema.GroupVersionResource{Group: "backend.example.com", Version: "v1", Resource: "gadgets"}
)

// aggregation is a front kapi with a second kapi registered behind it as
// the aggregated API server of backend.example.com/v1.
type aggregation struct {
	front, back *kapitest.Server
	backDir     string
	backCAPEM   []byte
	auditPath   string
	frontDyn    dynamic.Interface
	frontCS     kubernetes.Interface
}

// startAggregation starts both servers on 127.0.0.1: the backend trusts
// the front's generated front-proxy CA and serves a certificate for
// backend.default.svc (prepared in its --cert-dir before it starts, signed
// by its own CA, which becomes the APIService's caBundle). It serves a CRD
// group of its own, gadgets.backend.example.com.
func startAggregation(t testing.TB, frontOpts ...kapitest.Option) *aggregation {
	t.Helper()
	a := &aggregation{}
	if frontOpts == nil {
		frontOpts = []kapitest.Option{kapitest.WithOptions(func(o *kapitest.Options) { o.APIServiceAvailabilityPeriod = time.Second })}
	}
	a.front = kapitest.Start(t, frontOpts...)
	a.backDir = t.TempDir()
	// The backend's own start keeps this certificate only if it already
	// covers every name the backend requires of its serving certificate,
	// the first service IP of its (default) service range among them.
	bundle, err := pki.Ensure(pki.Config{Dir: filepath.Join(a.backDir, "pki"), Hosts: []string{"backend.default.svc", "10.0.0.1"}})
	if err != nil {
		t.Fatalf("backend PKI: %v", err)
	}
	a.backCAPEM = bundle.CAPEM
	a.auditPath = filepath.Join(a.backDir, "audit.log")
	a.back = kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) {
		o.DataDir = a.backDir
		o.StorageBackend = "etcd3" // the CRD survives the restart below
		o.CertDir = filepath.Join(a.backDir, "pki")
		o.RequestHeaderClientCAFile = filepath.Join(a.front.DataDir(), "pki", pki.FrontProxyCACertFile)
		o.AuditLogPath = a.auditPath
		o.Flags = append(o.Flags, "--audit-policy-file="+testaudit.MetadataPolicy(t))
	}))
	createGadgetCRD(t, a.back.Config)

	cfg := rest.CopyConfig(a.front.Config)
	cfg.QPS = -1
	a.frontDyn = dynamic.NewForConfigOrDie(cfg)
	a.frontCS = kubernetes.NewForConfigOrDie(cfg)
	return a
}

func createGadgetCRD(t testing.TB, cfg *rest.Config) {
	t.Helper()
	ctx := context.Background()
	cs := apiextensionsclient.NewForConfigOrDie(cfg)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "gadgets.backend.example.com"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "backend.example.com",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "gadgets", Singular: "gadget", Kind: "Gadget", ListKind: "GadgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextensionsv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"color": {Type: "string"}}},
					},
				}},
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Color", Type: "string", JSONPath: ".spec.color"}},
			}},
		},
	}
	if _, err := cs.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create gadget CRD on the backend: %v", err)
	}
	eventually(t, time.Minute, "gadget CRD established on the backend", func() error {
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %v", got.Status.Conditions)
	})
}

// register creates, on the front, the Service backend of type
// ExternalName pointing at localhost and the APIService
// v1.backend.example.com on it, with the backend's port as the
// APIService's service port (an ExternalName Service is reached at
// <externalName>:<APIService port>, verified as backend.default.svc).
func (a *aggregation) register(t testing.TB, caBundle []byte) {
	t.Helper()
	ctx := context.Background()
	makeExternalService(t, a.frontCS, "backend")
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1.backend.example.com"},
		"spec": map[string]any{
			"group": "backend.example.com", "version": "v1",
			"service":              map[string]any{"namespace": "default", "name": "backend", "port": int64(portOf(t, a.back.Address))},
			"caBundle":             caBundle,
			"groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
		},
	}}
	if _, err := a.frontDyn.Resource(apiServiceGVR).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create APIService: %v", err)
	}
}

// makeExternalService creates default/name, a Service of type
// ExternalName pointing at localhost: what reaches a backend on this
// machine's loopback interface (endpoints may not be loopback addresses,
// as upstream validates them). It has no ports: the port is the one of
// the reference (APIService or webhook).
func makeExternalService(t testing.TB, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Services("default").Create(context.Background(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service %s: %v", name, err)
	}
}

// portOf is the port of a host:port address.
func portOf(t testing.TB, addr string) int {
	t.Helper()
	_, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return port
}

// available returns the APIService's Available condition (status, reason,
// message).
func (a *aggregation) available(t testing.TB, name string) (string, string, string) {
	t.Helper()
	u, err := a.frontDyn.Resource(apiServiceGVR).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get APIService %s: %v", name, err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			msg, _ := m["message"].(string)
			return s, r, msg
		}
	}
	return "", "", ""
}

func (a *aggregation) waitAvailable(t testing.TB, want, reason string) string {
	t.Helper()
	var msg string
	eventually(t, time.Minute, "APIService Available="+want+" "+reason, func() error {
		s, r, m := a.available(t, "v1.backend.example.com")
		msg = m
		if s != want || (reason != "" && r != reason) {
			return fmt.Errorf("Available=%s reason %s: %s", s, r, m)
		}
		return nil
	})
	return msg
}

func TestAggregatedAPIServer(t *testing.T) {
	a := startAggregation(t)
	ctx := context.Background()

	// The built-in group-versions are local APIServices, Available.
	eventually(t, time.Minute, "local APIService v1.coordination.k8s.io", func() error {
		u, err := a.frontDyn.Resource(apiServiceGVR).Get(ctx, "v1.coordination.k8s.io", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if svc, found, _ := unstructured.NestedMap(u.Object, "spec", "service"); found && svc != nil {
			return fmt.Errorf("v1.coordination.k8s.io has a service %v, want local", svc)
		}
		return nil
	})

	a.register(t, a.backCAPEM)
	a.waitAvailable(t, "True", "Passed")

	// Discovery on the front lists the backend's group and resources.
	eventually(t, time.Minute, "gadgets in the front's discovery", func() error {
		list, err := a.frontCS.Discovery().ServerResourcesForGroupVersion("backend.example.com/v1")
		if err != nil {
			return err
		}
		for _, r := range list.APIResources {
			if r.Name == "gadgets" && r.Kind == "Gadget" && r.Namespaced {
				return nil
			}
		}
		return fmt.Errorf("resources %v", list.APIResources)
	})

	gadgets := a.frontDyn.Resource(gadgetGVR).Namespace("default")
	w, err := gadgets.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch through the proxy: %v", err)
	}
	defer w.Stop()

	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "backend.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1"},
		"spec":     map[string]any{"color": "blue"},
	}}
	created, err := gadgets.Create(ctx, g, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through the proxy: %v", err)
	}
	if got, _, _ := unstructured.NestedString(created.Object, "spec", "color"); got != "blue" {
		t.Errorf("got color %q, want blue", got)
	}
	// The object lives in the backend, not in the front.
	backDyn := dynamic.NewForConfigOrDie(a.back.Config)
	if _, err := backDyn.Resource(gadgetGVR).Namespace("default").Get(ctx, "g1", metav1.GetOptions{}); err != nil {
		t.Errorf("get g1 directly from the backend: %v", err)
	}
	list, err := gadgets.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list through the proxy: %v items, err %v", list, err)
	}
	if _, err := gadgets.Patch(ctx, "g1", "application/merge-patch+json", []byte(`{"spec":{"color":"red"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patch through the proxy: %v", err)
	}
	if err := gadgets.Delete(ctx, "g1", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete through the proxy: %v", err)
	}
	var events []watch.EventType
	timeout := time.After(30 * time.Second)
	for len(events) < 3 {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch through the proxy ended after %v", events)
			}
			events = append(events, ev.Type)
		case <-timeout:
			t.Fatalf("got watch events %v through the proxy, want ADDED MODIFIED DELETED", events)
		}
	}
	if want := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}; !slices.Equal(events, want) {
		t.Errorf("got watch events %v, want %v", events, want)
	}

	// kubectl through the front: discovery, the backend's printer
	// columns, create and delete, and the APIService table.
	for _, kubectl := range kubectls(t) {
		t.Run(filepath.Base(kubectl), func(t *testing.T) {
			kube := func(args ...string) string {
				t.Helper()
				out, stderr, err := runKubectl(t, kubectl, a.front.Kubeconfig, args...)
				if err != nil {
					t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, stderr)
				}
				return out
			}
			out := kube("api-resources", "--api-group=backend.example.com", "--no-headers")
			if f := strings.Fields(out); len(f) < 4 || f[0] != "gadgets" || f[1] != "backend.example.com/v1" || f[3] != "Gadget" {
				t.Errorf("api-resources: got %q, want gadgets backend.example.com/v1 true Gadget", out)
			}
			manifest := filepath.Join(t.TempDir(), "gadget.yaml")
			if err := os.WriteFile(manifest, []byte("apiVersion: backend.example.com/v1\nkind: Gadget\nmetadata:\n  name: k1\n  namespace: default\nspec:\n  color: green\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			kube("apply", "-f", manifest)
			out = kube("get", "gadgets", "-n", "default")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "NAME COLOR" || strings.Join(strings.Fields(lines[1]), " ") != "k1 green" {
				t.Errorf("get gadgets: got\n%s\nwant NAME COLOR (no Age: the CRD declares columns) and a k1 green row", out)
			}
			out = kube("get", "apiservices", "v1.backend.example.com", "--no-headers")
			if f := strings.Fields(out); len(f) < 3 || f[1] != "default/backend" || f[2] != "True" {
				t.Errorf("get apiservices: got %q, want v1.backend.example.com default/backend True", out)
			}
			kube("delete", "-f", manifest)

			// kubectl get -w through the proxy streams the backend's
			// table rows as they change.
			name := "kw-" + strings.ReplaceAll(filepath.Base(kubectl), ".", "-")
			if _, err := gadgets.Create(ctx, gadgetColored(name, "pink"), metav1.CreateOptions{}); err != nil {
				t.Fatalf("create %s: %v", name, err)
			}
			watchLines(t, kubectl, a.front.Kubeconfig, []string{"get", "gadgets", "-n", "default", "-w"}, func(wait func(string)) {
				wait("NAME COLOR")
				wait(name + " pink")
				if _, err := gadgets.Patch(ctx, name, "application/merge-patch+json", []byte(`{"spec":{"color":"teal"}}`), metav1.PatchOptions{}); err != nil {
					t.Fatalf("patch %s: %v", name, err)
				}
				wait(name + " teal")
			})
			if err := gadgets.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete %s: %v", name, err)
			}
			// The backend's OpenAPI is merged at the front.
			if out := kube("explain", "gadgets.spec"); !strings.Contains(out, "color") {
				t.Errorf("explain gadgets.spec: got\n%s\nwant the color field", out)
			}
			out = kube("get", "--raw", "/readyz?verbose")
			for _, line := range []string{"[+]autoregister-completion ok", "[+]poststarthook/apiservice-registration-controller ok", "[+]poststarthook/kube-apiserver-autoregistration ok"} {
				if !strings.Contains(out, line+"\n") {
					t.Errorf("readyz lacks %q:\n%s", line, out)
				}
			}
		})
	}

	// End the proxied watch: a server shutting down waits for its
	// long-running requests (up to its shutdown timeout), as upstream.
	w.Stop()

	// The backend saw the front's admin, forwarded by the front proxy.
	checkForwardedIdentity(t, a.auditPath)

	// The backend stops: the APIService becomes unavailable and requests
	// answer 503; everything else keeps working.
	if err := a.back.Stop(); err != nil {
		t.Fatalf("stop backend: %v", err)
	}
	msg := a.waitAvailable(t, "False", "FailedDiscoveryCheck")
	t.Logf("with the backend stopped: %s", msg)
	_, err = gadgets.List(ctx, metav1.ListOptions{})
	if status := statusCode(err); status != 503 {
		t.Errorf("list with the backend stopped: got %v (code %d), want 503", err, status)
	}
	if _, err := a.frontCS.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("core API with the backend stopped: %v", err)
	}

	// It starts again on the same port and data: Available again, and the
	// proxy serves it.
	port := portOf(t, a.back.Address)
	a.back = kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) {
		o.DataDir = a.backDir
		o.StorageBackend = "etcd3" // the CRD survives the restart below
		o.CertDir = filepath.Join(a.backDir, "pki")
		o.SecurePort = port
		o.RequestHeaderClientCAFile = filepath.Join(a.front.DataDir(), "pki", pki.FrontProxyCACertFile)
	}))
	a.waitAvailable(t, "True", "Passed")
	eventually(t, time.Minute, "list through the proxy after the backend restarted", func() error {
		_, err := gadgets.List(ctx, metav1.ListOptions{})
		return err
	})
}

// TestAggregatorFollowsServiceChanges: with the default probe period
// (30 s), an available APIService's condition follows its Service and the
// Service's EndpointSlices as soon as they change, not at the next probe.
// The ExternalName Service becomes a ClusterIP one without endpoints
// (EndpointsNotFound), gets an EndpointSlice whose one endpoint is not
// ready (MissingEndpoints), loses it (EndpointsNotFound) and becomes
// ExternalName again (Passed). The endpoint's address is a documentation
// address (192.0.2.10, RFC 5737) that nothing dials: it is never ready.
func TestAggregatorFollowsServiceChanges(t *testing.T) {
	a := startAggregation(t, kapitest.WithOptions(func(*kapitest.Options) {}))
	a.register(t, a.backCAPEM)
	a.waitAvailable(t, "True", "Passed")
	ctx := context.Background()
	services := a.frontCS.CoreV1().Services("default")
	slices := a.frontCS.DiscoveryV1().EndpointSlices("default")
	port := int32(portOf(t, a.back.Address))
	within := func(want, reason string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second) // half the probe period
		for {
			s, r, m := a.available(t, "v1.backend.example.com")
			if s == want && r == reason {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("got Available=%s %s (%s), want %s %s before the next periodic probe", s, r, m, want, reason)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	update := func(mutate func(*corev1.Service)) {
		t.Helper()
		svc, err := services.Get(ctx, "backend", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mutate(svc)
		if _, err := services.Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("update service backend to %s: %v", svc.Spec.Type, err)
		}
	}

	update(func(svc *corev1.Service) {
		svc.Spec.Type, svc.Spec.ExternalName = corev1.ServiceTypeClusterIP, ""
		svc.Spec.Ports = []corev1.ServicePort{{Name: "https", Port: port, Protocol: corev1.ProtocolTCP}}
	})
	within("False", "EndpointsNotFound")

	notReady := false
	if _, err := slices.Create(ctx, &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "backend-1", Labels: map[string]string{discoveryv1.LabelServiceName: "backend"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"192.0.2.10"}, Conditions: discoveryv1.EndpointConditions{Ready: &notReady}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptrTo("https"), Port: ptrTo(port), Protocol: ptrTo(corev1.ProtocolTCP)}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	within("False", "MissingEndpoints")

	if err := slices.Delete(ctx, "backend-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	within("False", "EndpointsNotFound")

	update(func(svc *corev1.Service) {
		svc.Spec.Type, svc.Spec.ExternalName, svc.Spec.Ports = corev1.ServiceTypeExternalName, "localhost", nil
		svc.Spec.ClusterIP, svc.Spec.ClusterIPs, svc.Spec.IPFamilies, svc.Spec.IPFamilyPolicy = "", nil, nil, nil
		svc.Spec.InternalTrafficPolicy = nil
	})
	within("True", "Passed")
}

// TestAggregatorBadBackends registers APIServices that cannot work: a
// missing service, a port with nothing listening, a backend that never
// answers, a wrong caBundle (the backends on 127.0.0.1, reached through
// ExternalName Services pointing at localhost). Each gets its upstream
// reason; the front keeps serving.
func TestAggregatorBadBackends(t *testing.T) {
	front := kapitest.Start(t)
	cfg := rest.CopyConfig(front.Config)
	dyn := dynamic.NewForConfigOrDie(cfg)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	create := func(name, group, service string, port int, caBundle []byte) {
		t.Helper()
		spec := map[string]any{
			"group": group, "version": "v1",
			"service":              map[string]any{"namespace": "default", "name": service, "port": int64(port)},
			"groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
		}
		if caBundle != nil {
			spec["caBundle"] = caBundle
		} else {
			spec["insecureSkipTLSVerify"] = true
		}
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
			"metadata": map[string]any{"name": name}, "spec": spec,
		}}
		if _, err := dyn.Resource(apiServiceGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create APIService %s: %v", name, err)
		}
	}
	wantReason := func(name, reason string) string {
		t.Helper()
		var msg string
		eventually(t, time.Minute, name+" Available=False "+reason, func() error {
			u, err := dyn.Resource(apiServiceGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Available" {
					msg, _ = m["message"].(string)
					if m["status"] == "False" && m["reason"] == reason {
						return nil
					}
					return fmt.Errorf("got %v %v: %v", m["status"], m["reason"], m["message"])
				}
			}
			return fmt.Errorf("no Available condition yet")
		})
		return msg
	}

	// A missing service.
	create("v1.missing.example.com", "missing.example.com", "nowhere", 443, nil)
	wantReason("v1.missing.example.com", "ServiceNotFound")

	// A port with nothing listening: bind a port, close it, point there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	makeExternalService(t, cs, "dead")
	create("v1.dead.example.com", "dead.example.com", "dead", deadPort, nil)
	wantReason("v1.dead.example.com", "FailedDiscoveryCheck")

	// A backend that accepts connections and never answers.
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	go func() {
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	makeExternalService(t, cs, "hang")
	create("v1.hang.example.com", "hang.example.com", "hang", hang.Addr().(*net.TCPAddr).Port, nil)

	// A real kapi backend with the wrong caBundle: the message names the
	// certificate problem.
	other := kapitest.Start(t)
	makeExternalService(t, cs, "wrongca")
	wrongCA, err := os.ReadFile(filepath.Join(front.DataDir(), "pki", pki.CACertFile))
	if err != nil {
		t.Fatal(err)
	}
	create("v1.wrongca.example.com", "wrongca.example.com", "wrongca", portOf(t, other.Address), wrongCA)
	msg := wantReason("v1.wrongca.example.com", "FailedDiscoveryCheck")
	if !strings.Contains(msg, "x509") && !strings.Contains(msg, "certificate") {
		t.Errorf("got FailedDiscoveryCheck message %q, want it to name the certificate problem", msg)
	}
	wantReason("v1.hang.example.com", "FailedDiscoveryCheck")

	// Requests to those groups answer 503 at once; the rest is served.
	for _, gv := range []string{"missing.example.com/v1", "dead.example.com/v1"} {
		res := rawGet(t, front, "/apis/"+gv+"/things")
		if res != 503 {
			t.Errorf("GET /apis/%s/things: got %d, want 503", gv, res)
		}
	}
	if _, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("core API with bad backends registered: %v", err)
	}
	if code := rawGet(t, front, "/readyz"); code != 200 {
		t.Errorf("/readyz with bad backends registered: got %d, want 200", code)
	}
}

func gadgetColored(name, color string) *unstructured.Unstructured {
	u := gadget(name)
	u.Object["spec"] = map[string]any{"color": color}
	return u
}

func rawGet(t *testing.T, s *kapitest.Server, path string) int {
	t.Helper()
	client, err := rest.HTTPClientFor(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	res, err := client.Get(s.Config.Host + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// checkForwardedIdentity finds the backend's audit events for gadgets and
// checks each was made as the front's admin (forwarded in X-Remote-*
// headers over the front-proxy client certificate).
func checkForwardedIdentity(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("backend audit log: %v", err)
	}
	defer f.Close()
	seen := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev audit.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if ev.ObjectRef == nil || ev.ObjectRef.Resource != "gadgets" {
			continue
		}
		// The front's own garbage collector lists and watches every served
		// resource, aggregated ones too (as kube-controller-manager's does
		// through discovery), as the loopback identity; it is forwarded
		// like any other user.
		if ev.User.Username == "system:apiserver" && (ev.Verb == "list" || ev.Verb == "watch") {
			continue
		}
		seen++
		if ev.User.Username != pki.AdminUser || !slices.Contains(ev.User.Groups, pki.AdminGroup) {
			t.Errorf("backend saw %s as %s %v, want %s in %s", ev.RequestURI, ev.User.Username, ev.User.Groups, pki.AdminUser, pki.AdminGroup)
		}
	}
	if seen == 0 {
		t.Error("the backend's audit log has no gadgets requests")
	}
}

func statusCode(err error) int32 {
	type statusError interface{ Status() metav1.Status }
	if se, ok := err.(statusError); ok {
		return se.Status().Code
	}
	return 0
}

func ptrTo[T any](v T) *T { return &v }
