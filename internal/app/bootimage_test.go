package app_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/internal/bootimage"
)

// The command starts from the built-in bootstrap image only on the memory
// backend and only when no flag but per-server ones is set.
func TestCommandUsesBootstrapImage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--storage-backend=memory"}, true},
		{[]string{"--storage-backend=memory", "--data-dir=/x", "--secure-port=0", "--bind-address=127.0.0.1", "-v=1"}, true},
		{nil, false}, // embedded etcd: the data dir may hold objects already
		{[]string{"--data-dir=/x"}, false},
		{[]string{"--storage-backend=memory", "--authorization-mode=AlwaysAllow"}, false},
		{[]string{"--storage-backend=memory", "--enable-priority-and-fairness=false"}, false},
		{[]string{"--storage-backend=memory", "--audit-log-path=/tmp/a.log"}, false},
		{[]string{"--storage-backend=memory", "--service-cluster-ip-range=10.1.0.0/16"}, false},
	} {
		got, err := app.UsesBootstrapImage(c.args)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%q: uses the image %v, want %v", c.args, got, c.want)
		}
	}
}

// runServer runs a memory-backend server of default options through Run,
// as the command does, seeded with the built-in image or not, and returns
// its admin config once ready. It stops when the test ends.
func runServer(t *testing.T, seed bool) *rest.Config {
	t.Helper()
	o := app.NewOptions()
	o.DataDir = t.TempDir()
	o.SecureServing.BindPort = 0
	o.Storage.Backend = "memory"
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.BootstrapImage = seed
	completed, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, completed) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("server did not stop")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("server not ready within 30 s")
		}
		select {
		case err := <-done:
			t.Fatalf("server exited: %v", err)
		default:
		}
		time.Sleep(20 * time.Millisecond)
		if _, err := os.Stat(completed.AdminKubeconfig); err != nil {
			continue
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", completed.AdminKubeconfig)
		if err != nil {
			continue
		}
		c, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Get(cfg.Host + "/readyz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return cfg
		}
	}
}

// bootstrapResources are the resources whose objects an image holds.
var bootstrapResources = []schema.GroupVersionResource{
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "flowschemas"},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1", Resource: "prioritylevelconfigurations"},
	{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"},
	{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"},
	{Version: "v1", Resource: "namespaces"},
}

// bootstrapObjects lists the bootstrap objects of the server at cfg,
// without what differs between two servers (uid, resourceVersion, times),
// by resource/namespace/name; begin is checked against their times.
func bootstrapObjects(t *testing.T, cfg *rest.Config, begin time.Time) (map[string]map[string]any, error) {
	t.Helper()
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, gvr := range bootstrapResources {
		list, err := dc.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range list.Items {
			if !begin.IsZero() && item.GetCreationTimestamp().Time.Before(begin) {
				return nil, fmt.Errorf("%s %s created at %v, before the server started (%v)", gvr.Resource, item.GetName(), item.GetCreationTimestamp(), begin)
			}
			obj := item.Object
			unstructured.RemoveNestedField(obj, "metadata", "uid")
			unstructured.RemoveNestedField(obj, "metadata", "resourceVersion")
			unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
			if mf, ok, _ := unstructured.NestedSlice(obj, "metadata", "managedFields"); ok {
				for _, f := range mf {
					delete(f.(map[string]any), "time")
				}
				_ = unstructured.SetNestedSlice(obj, mf, "metadata", "managedFields")
			}
			if cs, ok, _ := unstructured.NestedSlice(obj, "status", "conditions"); ok {
				for _, c := range cs {
					delete(c.(map[string]any), "lastTransitionTime")
				}
				_ = unstructured.SetNestedSlice(obj, cs, "status", "conditions")
			}
			out[gvr.Resource+"/"+item.GetNamespace()+"/"+item.GetName()] = obj
		}
	}
	return out, nil
}

// createsOf is how many creates of resource the server at cfg served
// (its apiserver_request_total).
func createsOf(t *testing.T, cfg *rest.Config, resource string) int {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(cfg.Host + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	n := 0
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "apiserver_request_total{") && strings.Contains(line, `verb="POST"`) &&
			strings.Contains(line, `resource="`+resource+`"`) {
			var v int
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			n += v
		}
	}
	return n
}

// Run seeds a default memory server with the built-in image: it serves the
// same bootstrap objects as a server that bootstrapped from nothing, with
// identities of its own, and its hooks created none of them.
func TestRunSeedsFromBootstrapImage(t *testing.T) {
	img, err := bootimage.Default()
	if err != nil {
		t.Fatal(err)
	}
	if img.Len() < 150 {
		t.Fatalf("the built-in image holds %d objects", img.Len())
	}
	cold := runServer(t, false)
	// Stored times are whole seconds.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	begin := time.Now().Truncate(time.Second)
	seeded := runServer(t, true)

	if n := createsOf(t, cold, "clusterroles"); n < 50 {
		t.Errorf("the cold server created %d clusterroles", n)
	}
	if n := createsOf(t, seeded, "clusterroles"); n != 0 {
		t.Errorf("the seeded server created %d clusterroles", n)
	}
	// Status writes (APF's conditions) may land after ready on either
	// server: compare until they agree.
	var diff string
	for deadline := time.Now().Add(10 * time.Second); ; {
		want, err := bootstrapObjects(t, cold, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := bootstrapObjects(t, seeded, begin)
		if err != nil {
			t.Fatal(err)
		}
		if diff = cmp.Diff(want, got); diff == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if diff != "" {
		t.Fatalf("the seeded server's bootstrap objects differ from a cold start's (-cold +seeded):\n%s", diff)
	}
}
