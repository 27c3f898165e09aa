package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
)

// podTemplateEtcdRequests returns etcd_requests_total's podtemplates
// series by operation (a resource no controller of kapi's touches).
func podTemplateEtcdRequests(t *testing.T, cfg *rest.Config) map[string]int {
	t.Helper()
	out := map[string]int{}
	mf := scrape(t, cfg)["etcd_requests_total"]
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		if have["group"] == "" && have["resource"] == "podtemplates" {
			out[have["operation"]] += int(m.GetCounter().GetValue())
		}
	}
	return out
}

func formatOps(ops map[string]int) string {
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		if ops[op] != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", op, ops[op]))
		}
	}
	return strings.Join(parts, " ")
}

// TestEtcdRequestOperations: kapi records its etcd requests under the
// operations kube-apiserver v1.37.2 records the same requests under
// (etcd_requests_total, read on the reference binary after the same
// steps on PodTemplates): the watch cache's initial list is a
// "listStream" (upstream's EtcdRangeStream), and the revision reads of
// consistent lists and of watches from the latest revision are
// "getCurrentResourceVersion"; no step makes a "list".
func TestEtcdRequestOperations(t *testing.T) {
	// The garbage collector and quota controllers (kube-controller-manager's
	// beside the reference) watch every resource, PodTemplates too.
	srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd(),
		kapitest.WithFlags("--controllers=*,-garbage-collector-controller,-resourcequota-controller"))
	ctx := context.Background()
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ns := "etcd-ops"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pts := cs.CoreV1().PodTemplates(ns)
	// A list of any state waits for the watch cache, which lists etcd.
	if _, err := pts.List(ctx, metav1.ListOptions{ResourceVersion: "0"}); err != nil {
		t.Fatal(err)
	}

	// step runs f and waits until the podtemplates requests it adds are
	// want (some are made after the response: a watch's).
	step := func(name, want string, f func() error) {
		t.Helper()
		before := podTemplateEtcdRequests(t, srv.Config)
		if err := f(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got string
		for deadline := time.Now().Add(10 * time.Second); ; {
			after := podTemplateEtcdRequests(t, srv.Config)
			for op, n := range before {
				after[op] -= n
			}
			if got = formatOps(after); got == want || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got != want {
			t.Errorf("%s: etcd requests %q, want %q (as kube-apiserver v1.37.2)", name, got, want)
		}
	}
	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"}},
		Template:   corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
	}
	step("create", "create=1", func() error {
		_, err := pts.Create(ctx, pt, metav1.CreateOptions{})
		return err
	})
	list := func(opts metav1.ListOptions) func() error {
		return func() error { _, err := pts.List(ctx, opts); return err }
	}
	step("consistent list", "getCurrentResourceVersion=1", list(metav1.ListOptions{}))
	step("consistent page", "getCurrentResourceVersion=1", list(metav1.ListOptions{Limit: 1}))
	step("consistent page with a selector", "getCurrentResourceVersion=1", list(metav1.ListOptions{Limit: 1, LabelSelector: "x=y"}))
	step("list of any state", "", list(metav1.ListOptions{ResourceVersion: "0"}))
	watchUntil := func(opts metav1.ListOptions, until watch.EventType) func() error {
		return func() error {
			opts.TimeoutSeconds = ptr.To[int64](30)
			w, err := pts.Watch(ctx, opts)
			if err != nil {
				return err
			}
			defer w.Stop()
			for ev := range w.ResultChan() {
				if ev.Type == until {
					return nil
				}
			}
			return fmt.Errorf("watch ended before a %s event", until)
		}
	}
	// A watch from the latest revision: a change made after it starts
	// shows that it has.
	step("watch", "getCurrentResourceVersion=1 update=1", func() error {
		w, err := pts.Watch(ctx, metav1.ListOptions{TimeoutSeconds: ptr.To[int64](30)})
		if err != nil {
			return err
		}
		defer w.Stop()
		if _, err := pts.Patch(ctx, "a", types.MergePatchType, []byte(`{"metadata":{"labels":{"z":"1"}}}`), metav1.PatchOptions{}); err != nil {
			return err
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Modified {
				return nil
			}
		}
		return fmt.Errorf("watch ended before the MODIFIED event")
	})
	step("watch list", "getCurrentResourceVersion=1", watchUntil(metav1.ListOptions{
		SendInitialEvents:    ptr.To(true),
		AllowWatchBookmarks:  true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
	}, watch.Bookmark))

	total := podTemplateEtcdRequests(t, srv.Config)
	if total["listStream"] < 1 || total["list"] != 0 {
		t.Errorf("etcd requests in all: %s; want the watch cache's listStream and no list", formatOps(total))
	}
}
