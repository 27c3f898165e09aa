package app

import (
	"cmp"
	"context"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/client/lazy"
	"github.com/kapi-dev/kapi/pkg/endpoints/handlers"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/configcontroller"
)

// newPriorityAndFairness makes the APF engine when
// --enable-priority-and-fairness (nil otherwise, or when both max-in-flight
// limits are 0: unlimited, no filter, as max-in-flight then): its seats are
// the two max-in-flight limits summed, as upstream.
func (c *Config) newPriorityAndFairness() (*filters.PriorityAndFairness, error) {
	o := c.Options
	seats := o.Run.MaxRequestsInFlight + o.Run.MaxMutatingRequestsInFlight
	if !o.FlowControl.EnablePriorityAndFairness && seats > 0 {
		// Max-in-flight: upstream's filter fills the executing pair of
		// read_vs_write_current_requests, and seat_fair_frac is served
		// (0) whatever the mode.
		observe, err := flowcontrol.NewMaxInFlightMetrics(c.Generic.MetricsRegistry, o.Run.MaxRequestsInFlight, o.Run.MaxMutatingRequestsInFlight)
		if err != nil {
			return nil, err
		}
		c.Metrics.ObserveMaxInFlight(observe)
	}
	if !o.FlowControl.EnablePriorityAndFairness || seats == 0 {
		return nil, nil
	}
	m, err := flowcontrol.NewMetrics(c.Generic.MetricsRegistry)
	if err != nil {
		return nil, err
	}
	// The requests waiting in queues and those executing, by kind, for
	// apiserver_current_inqueue_requests and
	// apiserver_current_inflight_requests (published by the
	// priority-and-fairness-filter hook).
	waiting := c.Metrics.WaitingMark()
	waiting.Observe(m.RequestKindObserver(true))
	c.Metrics.ExecutingMark().Observe(m.RequestKindObserver(false))
	c.flowControl = flowcontrol.New(flowcontrol.Options{ServerConcurrencyLimit: seats, Metrics: m,
		QueueNote: func(d *flowcontrol.RequestDescription, delta int) { waiting.Note(filters.MutatingVerb(d.Verb), delta) }})
	counts := &objectCounts{count: func(ctx context.Context, gr schema.GroupResource) (int64, bool) {
		return c.StorageMetrics.ObjectCount(ctx, gr)
	}, entries: map[schema.GroupResource]*objectCount{}}
	return &filters.PriorityAndFairness{Controller: c.flowControl, ObjectCount: counts.get, Executing: c.Metrics.ExecutingMark()}, nil
}

// installFlowControl adds, on the head server, the post-start hooks that
// publish the filter's watermarks and that create the bootstrap
// configuration and keep the engine fed (upstream's
// priority-and-fairness-filter, -config-producer and -config-consumer),
// and the /debug/api_priority_and_fairness dumps.
func (c *Config) installFlowControl(head *server.GenericServer) error {
	engine := c.flowControl
	if engine == nil {
		return nil
	}
	mux := head.Handler().NonRESTMux
	mux.Handle("/debug/api_priority_and_fairness/dump_priority_levels", mastersOnly(func(w http.ResponseWriter, r *http.Request) {
		engine.DumpPriorityLevels(w)
	}))
	mux.Handle("/debug/api_priority_and_fairness/dump_queues", mastersOnly(func(w http.ResponseWriter, r *http.Request) {
		engine.DumpQueues(w)
	}))
	mux.Handle("/debug/api_priority_and_fairness/dump_requests", mastersOnly(func(w http.ResponseWriter, r *http.Request) {
		engine.DumpRequests(w, r.URL.Query().Get("includeRequestDetails") == "1")
	}))
	// Upstream's hook of this name publishes the filter's watermarks once
	// a second from the server's start.
	if err := head.AddPostStartHook("priority-and-fairness-filter", func(hookCtx context.Context) error {
		go c.Metrics.RunWatermarks(hookCtx)
		return nil
	}); err != nil {
		return err
	}
	return head.AddPostStartHook("priority-and-fairness-config-producer", func(hookCtx context.Context) error {
		cfg, err := c.inProcessClientConfig(c.inProcess)
		if err != nil {
			return err
		}
		cfg.UserAgent = "kube-apiserver/apf-config"
		client, err := lazy.NewForConfig(cfg)
		if err != nil {
			return err
		}
		ctrl := configcontroller.New(client, engine, c.Logger.With("controller", "priority-and-fairness"))
		// The informers first, and the ensure reads what they hold, as
		// upstream's producer reads its listers: the watch-lists the
		// informers make anyway, not two lists more before ready.
		ctrl.Start(hookCtx)
		// The bootstrap configuration is the same fixed set of objects for
		// every server of the process: the creates of this first Ensure
		// take the managed fields an identical earlier create computed
		// (handlers.WithRepeatedCreate; the stored objects are the same,
		// TestRepeatedAPFCreatesStoreWhatTheNetworkDoes). Later ensures
		// (Run's) are not marked.
		if err := ctrl.Ensure(handlers.WithRepeatedCreate(hookCtx)); err != nil {
			return nil // the server is stopping
		}
		go ctrl.Run(hookCtx)
		go engine.Run(hookCtx, cmp.Or(c.Options.APFAdjustmentPeriod, flowcontrol.AdjustmentPeriod))
		return nil
	})
}

// mastersOnly serves h to members of system:masters, 403 to others (the
// dumps show other users' requests).
func mastersOnly(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, ok := request.UserFrom(r.Context()); !ok || !u.InGroup(user.SystemPrivileged) {
			http.Error(w, "forbidden: the API priority and fairness dumps are for system:masters", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		h(w, r)
	})
}

// objectCounts caches the resources' object counts for the width of
// lists: a list reads the cached count and, when it is older than
// objectCountTTL, has it refreshed in the background (upstream polls every
// minute; kapi's counts are local and cheap, so it refreshes sooner).
type objectCounts struct {
	count   func(context.Context, schema.GroupResource) (int64, bool)
	mu      sync.Mutex
	entries map[schema.GroupResource]*objectCount
}

type objectCount struct {
	n          int64
	ok         bool
	at         time.Time
	refreshing bool
}

const objectCountTTL = time.Second

func (o *objectCounts) get(gr schema.GroupResource) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.entries[gr]
	if e == nil {
		e = &objectCount{}
		o.entries[gr] = e
	}
	if !e.refreshing && time.Since(e.at) > objectCountTTL {
		e.refreshing = true
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			n, ok := o.count(ctx, gr)
			cancel()
			o.mu.Lock()
			e.n, e.ok, e.at, e.refreshing = n, ok, time.Now(), false
			o.mu.Unlock()
		}()
	}
	return e.n, e.ok
}
