package e2e

import (
	"bytes"
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestRequestBodySizeMetrics: apiserver_request_body_size_bytes
// (k8s.io/apiserver v0.37 endpoints/handlers/metrics, ALPHA; buckets
// LinearBuckets(50000, 100000, 31)) observes every request body read in
// full by create, update, patch, delete and deletecollection, under the
// resource (a subresource's parent) and upstream's verb names; the
// reference kube-apiserver v1.37.2 gave, for this sequence on configmaps
// (session 18), create/update/patch/delete/delete_collection counts of
// 2/1/1/1/1 with the bodies' byte sizes as sums (0 for a DELETE without
// a body), and a patch of pods/status of a missing pod counted under
// pods (read before the 404). Podtemplates stand in for configmaps here:
// no controller writes them.
func TestRequestBodySizeMetrics(t *testing.T) {
	srv := kapitest.Start(t)
	tr, err := rest.TransportFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	send := func(method, path, contentType, body string, want int) {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), method, srv.Config.Host+path, bytes.NewBufferString(body))
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s %s: %d, want %d", method, path, resp.StatusCode, want)
		}
	}
	const base = "/api/v1/namespaces/default/podtemplates"
	create1 := `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"t1","labels":{"x":"y"}},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}`
	create2 := `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"t2","labels":{"x":"y"}},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}`
	update := `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"t1","labels":{"x":"y","u":"1"}},"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}`
	patch := `{"metadata":{"labels":{"p":"1"}}}`
	podPatch := `{"status":{}}`
	deleteAll := `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`
	send(http.MethodPost, base, "application/json", create1, http.StatusCreated)
	send(http.MethodPost, base, "application/json", create2, http.StatusCreated)
	send(http.MethodPut, base+"/t1", "application/json", update, http.StatusOK)
	send(http.MethodPatch, base+"/t1", "application/merge-patch+json", patch, http.StatusOK)
	send(http.MethodPatch, "/api/v1/namespaces/default/pods/nope/status", "application/merge-patch+json", podPatch, http.StatusNotFound)
	send(http.MethodDelete, base+"/t1", "", "", http.StatusOK)
	send(http.MethodDelete, base+"?labelSelector=x%3Dy", "application/json", deleteAll, http.StatusOK)
	// A body over the limit is not observed.
	send(http.MethodPost, base, "application/json", `{"metadata":{"name":"`+string(bytes.Repeat([]byte("a"), 3*1024*1024))+`"}}`, http.StatusRequestEntityTooLarge)

	for _, c := range []struct {
		resource, verb string
		count, sum     int
	}{
		{"podtemplates", "create", 2, len(create1) + len(create2)},
		{"podtemplates", "update", 1, len(update)},
		{"podtemplates", "patch", 1, len(patch)},
		{"podtemplates", "delete", 1, 0},
		{"podtemplates", "delete_collection", 1, len(deleteAll)},
		{"pods", "patch", 1, len(podPatch)},
	} {
		labels := []string{`group=""`, `resource="` + c.resource + `"`, `verb="` + c.verb + `"`}
		if got := metricValue(t, srv, "apiserver_request_body_size_bytes_count", labels...); got != strconv.Itoa(c.count) {
			t.Errorf("apiserver_request_body_size_bytes_count %v = %q, want %d", labels, got, c.count)
		}
		if got := metricValue(t, srv, "apiserver_request_body_size_bytes_sum", labels...); got != strconv.Itoa(c.sum) {
			t.Errorf("apiserver_request_body_size_bytes_sum %v = %q, want %d", labels, got, c.sum)
		}
	}
	// Upstream's first and last buckets.
	if got := metricValue(t, srv, "apiserver_request_body_size_bytes_bucket", `resource="podtemplates"`, `verb="create"`, `le="50000"`); got != "2" {
		t.Errorf(`bucket le="50000": %q, want 2`, got)
	}
	if got := metricValue(t, srv, "apiserver_request_body_size_bytes_bucket", `resource="podtemplates"`, `verb="create"`, `le="3.05e+06"`); got != "2" {
		t.Errorf(`bucket le="3.05e+06": %q, want 2`, got)
	}
}

// TestSelfRequestMetrics: apiserver_selfrequest_total (k8s.io/apiserver
// v0.37 endpoints/metrics, ALPHA) counts requests the server makes to
// itself, i.e. whose user, after impersonation, is system:apiserver, by
// the verb, group, resource and subresource labels of
// apiserver_request_total. An admin impersonating system:apiserver stands
// in for the loopback client here; kapi's in-process controllers (also
// system:apiserver, with kube-controller-manager's user agent) stand for
// a kube-controller-manager and are not counted.
func TestSelfRequestMetrics(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	value := func(labels ...string) int {
		t.Helper()
		v := metricValue(t, srv, "apiserver_selfrequest_total", labels...)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("apiserver_selfrequest_total %v: %q", labels, v)
		}
		return n
	}
	cfg := rest.CopyConfig(srv.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:apiserver", Groups: []string{"system:masters"}}
	self := kubernetes.NewForConfigOrDie(cfg)
	kcmCfg := rest.CopyConfig(cfg)
	kcmCfg.UserAgent = "kube-controller-manager/v1.37.2 (linux/amd64) kubernetes/unknown"
	kcm := kubernetes.NewForConfigOrDie(kcmCfg)
	admin := kubernetes.NewForConfigOrDie(srv.Config)

	getPT := []string{`group=""`, `resource="podtemplates"`, `subresource=""`, `verb="GET"`}
	listPT := []string{`group=""`, `resource="podtemplates"`, `subresource=""`, `verb="LIST"`}
	podStatus := []string{`group=""`, `resource="pods"`, `subresource="status"`, `verb="GET"`}
	get0, list0, status0 := value(getPT...), value(listPT...), value(podStatus...)

	for range 2 {
		if _, err := self.CoreV1().PodTemplates("default").Get(ctx, "nope", metav1.GetOptions{}); err == nil {
			t.Fatal("found podtemplate nope")
		}
	}
	if _, err := self.CoreV1().PodTemplates("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := self.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/default/pods/nope/status").Do(ctx).Error(); err == nil {
		t.Fatal("found pod nope")
	}
	// Not counted: the admin, and a controller's user agent.
	if _, err := admin.CoreV1().PodTemplates("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kcm.CoreV1().PodTemplates("default").List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}

	if got := value(getPT...) - get0; got != 2 {
		t.Errorf("self GETs of podtemplates: +%d, want +2", got)
	}
	if got := value(listPT...) - list0; got != 1 {
		t.Errorf("self LISTs of podtemplates: +%d, want +1", got)
	}
	if got := value(podStatus...) - status0; got != 1 {
		t.Errorf("self GETs of pods/status: +%d, want +1", got)
	}
}

// TestListAndCacheLatencyMetrics, on etcd:
// apiserver_watch_list_duration_seconds (k8s.io/apiserver v0.37
// endpoints/metrics, BETA) is observed once per watch list, when the
// BOOKMARK ending its initial events is written, by group, version,
// resource and scope; apiserver_storage_list_duration_seconds
// (storage/etcd3/metrics, ALPHA) once per list read from etcd, streamed
// unless a page with selectors (EtcdRangeStream, on in v1.37);
// apiserver_watch_cache_initialization_duration_seconds (cacher/metrics,
// ALPHA) once per initialization of a watch cache. Events are read from
// etcd (not cached by default), podtemplates and configmaps from the
// watch cache.
func TestListAndCacheLatencyMetrics(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd())
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	count := func(name string, labels ...string) int {
		t.Helper()
		v := metricValue(t, srv, name+"_count", labels...)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s %v: %q", name, labels, v)
		}
		return n
	}

	// Podtemplates: no controller watches them.
	watchList := []string{`group=""`, `resource="podtemplates"`, `scope="namespace"`, `version="v1"`}
	untilEnd := func(opts metav1.ListOptions) {
		t.Helper()
		w, err := cs.CoreV1().PodTemplates("default").Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for ev := range w.ResultChan() {
			if m, err := meta.Accessor(ev.Object); ev.Type == watch.Bookmark && err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				return
			}
		}
	}
	untilEnd(metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	waitUntil(t, "the watch list's latency", func() bool { return count("apiserver_watch_list_duration_seconds", watchList...) == 1 })
	// A watch without resourceVersion that takes bookmarks gets the
	// initial events and their end too: counted, as on the reference
	// (checked with curl, session 18).
	untilEnd(metav1.ListOptions{AllowWatchBookmarks: true})
	waitUntil(t, "the legacy watch's latency", func() bool { return count("apiserver_watch_list_duration_seconds", watchList...) == 2 })
	// Without bookmarks, or from a resourceVersion, there is no end: not
	// counted. The resourceVersion is a current one: an old one such as
	// "1" is 410 "too old resource version" whenever the watch cache
	// started after it (as upstream's cacher), which made this flaky.
	current, err := cs.CoreV1().PodTemplates("default").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []metav1.ListOptions{{}, {ResourceVersion: current.ResourceVersion, AllowWatchBookmarks: true}} {
		w, err := cs.CoreV1().PodTemplates("default").Watch(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		w.Stop()
	}
	if got := count("apiserver_watch_list_duration_seconds", watchList...); got != 2 {
		t.Errorf("watch lists of podtemplates: %d, want 2", got)
	}

	streamed := []string{`group=""`, `resource="events"`, `streamed="true"`}
	paged := []string{`group=""`, `resource="events"`, `streamed="false"`}
	s0, p0 := count("apiserver_storage_list_duration_seconds", streamed...), count("apiserver_storage_list_duration_seconds", paged...)
	for _, opts := range []metav1.ListOptions{{}, {Limit: 5}, {Limit: 5, LabelSelector: "a=b"}} {
		if _, err := cs.CoreV1().Events("default").List(ctx, opts); err != nil {
			t.Fatal(err)
		}
	}
	if got := count("apiserver_storage_list_duration_seconds", streamed...) - s0; got != 2 {
		t.Errorf("streamed lists of events: +%d, want +2", got)
	}
	if got := count("apiserver_storage_list_duration_seconds", paged...) - p0; got != 1 {
		t.Errorf("paged lists of events: +%d, want +1", got)
	}

	cm := []string{`group=""`, `resource="configmaps"`}
	inits := metricValue(t, srv, "apiserver_watch_cache_initializations_total", cm...)
	if got := count("apiserver_watch_cache_initialization_duration_seconds", cm...); got < 1 || strconv.Itoa(got) != inits {
		t.Errorf("watch cache initialization durations of configmaps: %d, want as many as initializations (%s)", got, inits)
	}
}
