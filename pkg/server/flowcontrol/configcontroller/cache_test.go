package configcontroller_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/configcontroller"
)

// requestLog records the collection lists (GETs of a collection, not
// watches) a client sends.
type requestLog struct {
	mu    sync.Mutex
	lists []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet && r.URL.Query().Get("watch") != "true" &&
			(strings.HasSuffix(r.URL.Path, "/flowschemas") || strings.HasSuffix(r.URL.Path, "/prioritylevelconfigurations")) {
			l.mu.Lock()
			l.lists = append(l.lists, r.URL.Path)
			l.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

func (l *requestLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lists
	l.lists = nil
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestEnsureReadsTheInformers: once Start's informers have synced, an
// ensure reads what exists from them (as upstream's producer reads its
// listers) and sends no list; before Start it lists. Either way a deleted
// suggested schema is created again.
func TestEnsureReadsTheInformers(t *testing.T) {
	srv := kapitest.Start(t)
	admin := kubernetes.NewForConfigOrDie(srv.Config)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	var log requestLog
	cfg := rest.CopyConfig(srv.Config)
	cfg.WrapTransport = log.wrap
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctrl := configcontroller.New(cs, flowcontrol.New(flowcontrol.Options{ServerConcurrencyLimit: 10}), nil)

	fss := admin.FlowcontrolV1().FlowSchemas()
	if err := fss.Delete(ctx, "system-nodes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := ctrl.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if got := log.take(); len(got) != 2 {
		t.Errorf("ensure before Start sent lists %v, want one per kind", got)
	}
	if _, err := fss.Get(ctx, "system-nodes", metav1.GetOptions{}); err != nil {
		t.Fatalf("system-nodes after the ensure before Start: %v", err)
	}

	if err := fss.Delete(ctx, "system-nodes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ctrl.Start(ctx)
	if err := ctrl.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if got := log.take(); len(got) != 0 {
		t.Errorf("ensure after Start sent lists %v, want none (the informers hold what exists)", got)
	}
	if _, err := fss.Get(ctx, "system-nodes", metav1.GetOptions{}); err != nil {
		t.Fatalf("system-nodes after the ensure from the informers: %v", err)
	}
}
