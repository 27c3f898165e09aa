package flowcontrol

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/bootstrap"
)

// defaultConfig is upstream's mandatory and suggested objects, with UIDs.
func defaultConfig() ([]*flowcontrolv1.FlowSchema, []*flowcontrolv1.PriorityLevelConfiguration) {
	fss := append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...)
	pls := append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...)
	for _, fs := range fss {
		fs.UID = types.UID("fs-" + fs.Name)
	}
	for _, pl := range pls {
		pl.UID = types.UID("pl-" + pl.Name)
	}
	return fss, pls
}

func newDefault(t testing.TB, seats int) *Controller {
	c := New(Options{ServerConcurrencyLimit: seats})
	c.Apply(defaultConfig())
	return c
}

func TestClassifyDefaultConfig(t *testing.T) {
	c := newDefault(t, 600)
	for _, tc := range []struct {
		name   string
		req    Request
		fs, pl string
		dist   string
	}{
		{"masters", Request{User: "admin", Groups: []string{"system:masters", "system:authenticated"}, IsResourceRequest: true, Verb: "list", Resource: "pods"}, "exempt", "exempt", ""},
		{"probe", Request{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/readyz"}, "probes", "exempt", ""},
		{"probe sub-path is not a probe", Request{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, Verb: "get", Path: "/readyz/etcd"}, "global-default", "global-default", "system:anonymous"},
		{"node lease", Request{User: "system:node:n1", Groups: []string{"system:nodes", "system:authenticated"}, IsResourceRequest: true, Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-node-lease"}, "system-node-high", "node-high", "system:node:n1"},
		{"node status", Request{User: "system:node:n1", Groups: []string{"system:nodes"}, IsResourceRequest: true, Verb: "patch", Resource: "nodes", Subresource: "status"}, "system-node-high", "node-high", "system:node:n1"},
		{"node pods", Request{User: "system:node:n1", Groups: []string{"system:nodes"}, IsResourceRequest: true, Verb: "list", Resource: "pods"}, "system-nodes", "system", "system:node:n1"},
		{"scheduler lease", Request{User: "system:kube-scheduler", IsResourceRequest: true, Verb: "get", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "kube-system"}, "system-leader-election", "leader-election", "system:kube-scheduler"},
		{"scheduler pods", Request{User: "system:kube-scheduler", IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "ns"}, "kube-scheduler", "workload-high", "ns"},
		{"kcm endpoints", Request{User: "system:kube-controller-manager", IsResourceRequest: true, Verb: "update", Resource: "endpoints", Namespace: "ns"}, "kube-controller-manager", "workload-high", "ns"},
		{"kube-system sa configmap", Request{User: "system:serviceaccount:kube-system:x", Groups: []string{"system:serviceaccounts"}, IsResourceRequest: true, Verb: "get", Resource: "configmaps", Namespace: "ns"}, "kube-system-service-accounts", "workload-high", "ns"},
		{"kube-system sa pods", Request{User: "system:serviceaccount:kube-system:x", Groups: []string{"system:serviceaccounts"}, IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "ns"}, "kube-system-service-accounts", "workload-high", "ns"},
		{"other sa", Request{User: "system:serviceaccount:app:x", Groups: []string{"system:serviceaccounts", "system:authenticated"}, IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "app"}, "service-accounts", "workload-low", "system:serviceaccount:app:x"},
		{"user", Request{User: "alice", Groups: []string{"system:authenticated"}, IsResourceRequest: true, Verb: "list", Resource: "pods", Namespace: "app"}, "global-default", "global-default", "alice"},
		{"no group at all", Request{User: "nobody", IsResourceRequest: true, Verb: "list", Resource: "pods"}, "catch-all", "catch-all", "nobody"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cls := c.Classify(&tc.req)
			if cls.FlowSchema != tc.fs || cls.PriorityLevel != tc.pl || cls.Distinguisher != tc.dist {
				t.Errorf("got %s/%s/%q, want %s/%s/%q", cls.FlowSchema, cls.PriorityLevel, cls.Distinguisher, tc.fs, tc.pl, tc.dist)
			}
			if cls.FlowSchema != "catch-all" && cls.FlowSchemaUID != "fs-"+tc.fs {
				t.Errorf("flow schema UID %q", cls.FlowSchemaUID)
			}
			if cls.PriorityLevelUID != "pl-"+tc.pl {
				t.Errorf("priority level UID %q", cls.PriorityLevelUID)
			}
		})
	}
}

// Matching precedence first, then name; a schema whose level is missing is
// skipped (dangling).
func TestClassifyPrecedenceAndDangling(t *testing.T) {
	fss, pls := defaultConfig()
	mk := func(name string, prec int32, pl string) *flowcontrolv1.FlowSchema {
		return &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: pl}, MatchingPrecedence: prec,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "bob"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/apis/*"}}},
			}},
		}}
	}
	c := New(Options{ServerConcurrencyLimit: 100})
	c.Apply(append(fss, mk("b", 50, "workload-low"), mk("a", 50, "workload-high"), mk("z", 10, "missing")), pls)
	req := &Request{User: "bob", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/apis/apps"}
	if cls := c.Classify(req); cls.FlowSchema != "a" || cls.PriorityLevel != "workload-high" {
		t.Errorf("got %s/%s, want a/workload-high (same precedence: by name; z is dangling)", cls.FlowSchema, cls.PriorityLevel)
	}
	if !c.Dangling("z") || c.Dangling("a") {
		t.Errorf("dangling: z %v a %v", c.Dangling("z"), c.Dangling("a"))
	}
	// "/apis/*" matches "/apis" too, not "/apisx".
	if cls := c.Classify(&Request{User: "bob", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/apisx"}); cls.FlowSchema != "global-default" {
		t.Errorf("/apisx: %s", cls.FlowSchema)
	}
}

// Upstream's nominal limits for the default configuration: shares sum to
// 245 (5+0+30+40+10+40+100+20); nominal = ceil(seats*shares/245).
func TestNominalLimits(t *testing.T) {
	c := newDefault(t, 600)
	levels := c.Levels()
	want := map[string][3]int{ // nominal, lendable, lower bound
		"catch-all":       {13, 0, 13},
		"exempt":          {0, 0, 0},
		"system":          {74, 24, 50},
		"node-high":       {98, 25, 73},
		"leader-election": {25, 0, 25},
		"workload-high":   {98, 49, 49},
		"workload-low":    {245, 221, 24},
		"global-default":  {49, 25, 24},
	}
	for name, w := range want {
		l := levels[name]
		if l.NominalCL != w[0] || l.LendableCL != w[1] || l.NominalCL-l.LendableCL != w[2] {
			t.Errorf("%s: nominal %d lendable %d, want %v", name, l.NominalCL, l.LendableCL, w)
		}
		if !l.Exempt && l.BorrowingCL != l.NominalCL+600 {
			t.Errorf("%s: upper limit %d, want nominal+600 (no borrowingLimitPercent: unbounded)", name, l.BorrowingCL)
		}
	}
}

func TestFairAllocation(t *testing.T) {
	// Two classes that want more than there is: shared in proportion to
	// their targets, within their bounds.
	got, frac := fairAllocation(100, []float64{10, 10}, []float64{100, 100}, []float64{150, 50})
	if int(got[0]+0.5) != 75 || int(got[1]+0.5) != 25 || frac != 0.5 {
		t.Errorf("got %v %v, want [75 25] 0.5", got, frac)
	}
	// A bound holds: the second class cannot go under 40.
	got, frac = fairAllocation(100, []float64{10, 40}, []float64{100, 100}, []float64{150, 10})
	if int(got[0]+0.5) != 60 || int(got[1]+0.5) != 40 || math.Abs(frac-0.4) > 1e-12 {
		t.Errorf("got %v %v, want [60 40] 0.4", got, frac)
	}
	// More than the upper bounds: every class at its upper bound.
	got, frac = fairAllocation(1000, []float64{10, 40}, []float64{100, 100}, []float64{150, 10})
	if got[0] != 100 || got[1] != 100 || frac != 10 {
		t.Errorf("got %v %v, want [100 100] 10 (the largest upper bound over target)", got, frac)
	}
}

// Borrowing: a busy level with lendable seats elsewhere gets more than its
// nominal limit after an adjustment; an idle one keeps at least its lower
// bound.
func TestBorrowing(t *testing.T) {
	now := time.Unix(0, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	c := New(Options{ServerConcurrencyLimit: 100, Now: clock})
	c.Apply(defaultConfig())
	user := &Request{User: "alice", Groups: []string{"system:authenticated"}, IsResourceRequest: true, Verb: "get", Resource: "pods"}
	cls := c.Classify(user)
	nominal := c.Levels()["global-default"].NominalCL
	var tickets []*Ticket
	for range nominal {
		tk, err := c.Admit(context.Background(), cls, Width{Seats: 1}, time.Second, RequestDescription{})
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	// Demand beyond the limit: requests waiting in queue.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := *user
			r.User = fmt.Sprint("u", i)
			tk, err := c.Admit(ctx, c.Classify(&r), Width{Seats: 1}, time.Minute, RequestDescription{})
			if err == nil {
				tk.Finish()
			}
		}()
	}
	eventually(t, func() bool { return c.Levels()["global-default"].Waiting == 20 })
	mu.Lock()
	now = now.Add(10 * time.Second)
	mu.Unlock()
	c.Tick()
	l := c.Levels()["global-default"]
	if l.CurrentCL <= nominal {
		t.Errorf("current limit %d after an adjustment under demand, want > nominal %d", l.CurrentCL, nominal)
	}
	if lw := c.Levels()["workload-low"]; lw.CurrentCL < lw.NominalCL-lw.LendableCL {
		t.Errorf("workload-low lent below its lower bound: %+v", lw)
	}
	for _, tk := range tickets {
		tk.Finish()
	}
	wg.Wait()
}

func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	testwait.Until(t, 10*time.Second, time.Millisecond, "condition", cond)
}

// A limited level with a small queue configuration: the exempt level never
// queues, Reject rejects at once, Queue queues up to the length limit and
// then rejects, waiting is bounded.
func TestQueueingAndRejection(t *testing.T) {
	pls := []*flowcontrolv1.PriorityLevelConfiguration{
		{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1), LendablePercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 2}}}}},
	}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "fs-q"}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "q"}, MatchingPrecedence: 100,
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "q"}}},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
		}},
	}}
	// 10 seats: catch-all 5 shares and q 1 share of 6: q's nominal is
	// ceil(10/6) = 2.
	c := New(Options{ServerConcurrencyLimit: 10})
	c.Apply([]*flowcontrolv1.FlowSchema{fs}, pls)
	qcls := c.Classify(&Request{User: "q", Verb: "get", Path: "/x"})
	if qcls.PriorityLevel != "q" || c.Levels()["q"].CurrentCL != 2 {
		t.Fatalf("classified %s, levels %+v", qcls.PriorityLevel, c.Levels()["q"])
	}
	ctx := context.Background()
	a, err := c.Admit(ctx, qcls, Width{Seats: 2}, time.Second, RequestDescription{})
	if err != nil {
		t.Fatal(err)
	}
	// Queue two, the third is rejected: queue-full.
	type result struct {
		t   *Ticket
		err error
	}
	res := make(chan result, 2)
	for range 2 {
		go func() {
			tk, err := c.Admit(ctx, qcls, Width{Seats: 1}, 10*time.Second, RequestDescription{})
			res <- result{tk, err}
		}()
	}
	eventually(t, func() bool { return c.Levels()["q"].Waiting == 2 })
	var rej *Rejection
	if _, err := c.Admit(ctx, qcls, Width{Seats: 1}, time.Second, RequestDescription{}); !errors.As(err, &rej) || rej.Reason != ReasonQueueFull {
		t.Fatalf("third waiting request: %v, want queue-full", err)
	}
	// The exempt level is never queued, whatever the load.
	ex := c.Classify(&Request{User: "root", Groups: []string{"system:masters"}, Verb: "get", Path: "/x"})
	for range 100 {
		if _, err := c.Admit(ctx, ex, Width{Seats: 10}, 0, RequestDescription{}); err != nil {
			t.Fatalf("exempt: %v", err)
		}
	}
	if l := c.Levels()["exempt"]; l.Waiting != 0 || l.Executing != 100 {
		t.Errorf("exempt level %+v", l)
	}
	// Releasing the wide request dispatches both waiting ones.
	a.Finish()
	for range 2 {
		r := <-res
		if r.err != nil {
			t.Fatalf("queued request: %v", r.err)
		}
		defer r.t.Finish()
	}
	// Now the level is full (2 seats): a waiter times out.
	start := time.Now()
	if _, err := c.Admit(ctx, qcls, Width{Seats: 1}, 50*time.Millisecond, RequestDescription{}); !errors.As(err, &rej) || rej.Reason != ReasonTimeout {
		t.Fatalf("waiting on a full level: %v, want time-out", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("timed out after %v", d)
	}
	// And a cancelled client leaves the queue as cancelled.
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := c.Admit(cctx, qcls, Width{Seats: 1}, time.Minute, RequestDescription{}); !errors.As(err, &rej) || rej.Reason != ReasonCancelled {
		t.Fatalf("cancelled: %v", err)
	}
	// catch-all rejects (Reject) once its 9 seats are taken.
	ca := c.Classify(&Request{User: "nobody", Verb: "get", Path: "/x"})
	for range c.Levels()["catch-all"].CurrentCL {
		if _, err := c.Admit(ctx, ca, Width{Seats: 1}, 0, RequestDescription{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Admit(ctx, ca, Width{Seats: 1}, time.Second, RequestDescription{}); !errors.As(err, &rej) || rej.Reason != ReasonConcurrencyLimit {
		t.Fatalf("catch-all over its limit: %v, want concurrency-limit", err)
	}
	l := c.Levels()["q"]
	if l.Rejected != 3 || l.TimedOut != 1 || l.Cancelled != 1 {
		t.Errorf("counters %+v", l)
	}
}

// Fair queuing: with one flow keeping its queues full, a second flow's
// requests are dispatched ahead of the backlog.
func TestFairQueuing(t *testing.T) {
	c := newDefault(t, 10) // global-default: ceil(10*20/245) = 1 seat
	flooder := c.Classify(&Request{User: "flooder", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/x"})
	polite := c.Classify(&Request{User: "polite", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/x"})
	ctx := context.Background()
	running, err := c.Admit(ctx, flooder, Width{Seats: 1}, time.Second, RequestDescription{})
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 100)
	var wg sync.WaitGroup
	for range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk, err := c.Admit(ctx, flooder, Width{Seats: 1}, time.Minute, RequestDescription{})
			if err == nil {
				order <- "flooder"
				tk.Finish()
			}
		}()
	}
	eventually(t, func() bool { return c.Levels()["global-default"].Waiting == 30 })
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk, err := c.Admit(ctx, polite, Width{Seats: 1}, time.Minute, RequestDescription{})
		if err == nil {
			order <- "polite"
			tk.Finish()
		}
	}()
	eventually(t, func() bool { return c.Levels()["global-default"].Waiting == 31 })
	running.Finish()
	wg.Wait()
	close(order)
	pos := 0
	for who := range order {
		if who == "polite" {
			break
		}
		pos++
	}
	// The flooder's 30 requests sit in its hand of 6 queues; the polite
	// request starts at the level's virtual time: it goes within the
	// first round of the flooder's queues.
	if pos > 6 {
		t.Errorf("polite request dispatched after %d flooder requests, want at most 6", pos)
	}
}

func TestDealDistinct(t *testing.T) {
	c := newDefault(t, 100)
	lv := c.levels["global-default"]
	for h := range uint64(2000) {
		hand := lv.deal(h*0x9e3779b97f4a7c15, nil)
		if len(hand) != 6 {
			t.Fatalf("hand %v", hand)
		}
		seen := map[int]bool{}
		for _, q := range hand {
			if q < 0 || q >= 128 || seen[q] {
				t.Fatalf("hand %v: not 6 distinct queues of 128", hand)
			}
			seen[q] = true
		}
	}
}

// Width: a request wider than the level's limit runs alone.
func TestWideRequestRunsAlone(t *testing.T) {
	c := newDefault(t, 10)
	cls := c.Classify(&Request{User: "alice", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/x"})
	tk, err := c.Admit(context.Background(), cls, Width{Seats: 10}, time.Second, RequestDescription{})
	if err != nil {
		t.Fatalf("a 10-seat request on a 1-seat level with nothing executing: %v", err)
	}
	var rej *Rejection
	if _, err := c.Admit(context.Background(), cls, Width{Seats: 1}, 20*time.Millisecond, RequestDescription{}); !errors.As(err, &rej) {
		t.Fatalf("a second request while the wide one runs: %v, want to wait and time out", err)
	}
	if s := c.Levels()["global-default"].SeatsInUse; s != 10 {
		t.Errorf("seats in use %d, want 10", s)
	}
	tk.Finish()
	tk.Finish() // idempotent
	if s := c.Levels()["global-default"].SeatsInUse; s != 0 {
		t.Errorf("seats in use %d after Finish, want 0", s)
	}
}

// Final seats: a mutation notifying watchers holds its final seats for the
// additional latency after it finished.
func TestFinalSeats(t *testing.T) {
	c := newDefault(t, 100)
	cls := c.Classify(&Request{User: "alice", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/x"})
	tk, err := c.Admit(context.Background(), cls, Width{Seats: 1, FinalSeats: 3, AdditionalLatency: 50 * time.Millisecond}, time.Second, RequestDescription{})
	if err != nil {
		t.Fatal(err)
	}
	tk.Finish()
	if s := c.Levels()["global-default"].SeatsInUse; s != 3 {
		t.Errorf("seats in use right after Finish: %d, want the 3 final seats", s)
	}
	eventually(t, func() bool { return c.Levels()["global-default"].SeatsInUse == 0 })
}

// A level whose demand reached its nominal limit during the period keeps
// that limit at the adjustment (upstream's lower bound: the lesser of the
// high watermark and the nominal limit, not less than nominal-lendable),
// even when its average demand was low and another level wants seats.
func TestBorrowingLowerBoundIsHighWatermark(t *testing.T) {
	now := time.Unix(0, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c := New(Options{ServerConcurrencyLimit: 100, Now: clock})
	c.Apply(defaultConfig())

	// A short spike on global-default up to its nominal limit (the
	// adjustment at Apply may have lent some of it: part of the spike
	// waits, which is demand too).
	alice := &Request{User: "alice", Groups: []string{"system:authenticated"}, IsResourceRequest: true, Verb: "get", Resource: "pods"}
	gd := c.Levels()["global-default"]
	releaseSpike := holdDemand(t, c, alice, "global-default", gd.NominalCL)
	advance(time.Millisecond)
	releaseSpike()

	// workload-low (service accounts) wants far more than its share.
	sa := &Request{User: "system:serviceaccount:ns:sa", Groups: []string{"system:serviceaccounts", "system:authenticated"}, IsResourceRequest: true, Verb: "get", Resource: "pods"}
	wl := c.Levels()["workload-low"]
	release := holdDemand(t, c, sa, "workload-low", wl.NominalCL+40)
	defer release()
	advance(10 * time.Second)
	c.Tick()
	if got := c.Levels()["global-default"]; got.CurrentCL < got.NominalCL {
		t.Errorf("global-default reached its nominal limit %d in the period but was cut to %d (lower bound nominal-lendable = %d)",
			got.NominalCL, got.CurrentCL, got.NominalCL-got.LendableCL)
	}
	if got := c.Levels()["workload-low"]; got.CurrentCL <= got.NominalCL {
		t.Errorf("workload-low under demand: limit %d, want more than nominal %d", got.CurrentCL, got.NominalCL)
	}
}

// holdDemand has n requests of distinct users like r admitted or waiting
// on level, each holding its seat until the returned func is called (the
// waiting ones then give up).
func holdDemand(t *testing.T, c *Controller, r *Request, level string, n int) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := *r
			q.User = fmt.Sprint(r.User, i)
			if tk, err := c.Admit(ctx, c.Classify(&q), Width{Seats: 1}, time.Minute, RequestDescription{}); err == nil {
				<-ctx.Done()
				tk.Finish()
			}
		}()
	}
	eventually(t, func() bool { l := c.Levels()[level]; return l.Executing+l.Waiting == n })
	return func() { cancel(); wg.Wait() }
}

// QueueNote hears of every request that enters a queue and of its leaving
// (dispatched, timed out, cancelled), with its description; requests that
// execute at once are not noted.
func TestQueueNote(t *testing.T) {
	pls := []*flowcontrolv1.PriorityLevelConfiguration{
		{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1), LendablePercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue, Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 5}}}}},
	}
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: metav1.ObjectMeta{Name: "fs-q"}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "q"}, MatchingPrecedence: 100,
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "q"}}},
			NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
		}},
	}}
	var mu sync.Mutex
	var notes []string
	count := map[string]int{}
	c := New(Options{ServerConcurrencyLimit: 10, QueueNote: func(d *RequestDescription, delta int) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, fmt.Sprintf("%s%+d", d.Verb, delta))
		count[d.Verb] += delta
	}})
	c.Apply([]*flowcontrolv1.FlowSchema{fs}, pls)
	waiting := func(verb string) int {
		mu.Lock()
		defer mu.Unlock()
		return count[verb]
	}
	qcls := c.Classify(&Request{User: "q", Verb: "get", Path: "/x"})
	ctx := context.Background()
	// Two seats: taken at once, not noted.
	a, err := c.Admit(ctx, qcls, Width{Seats: 2}, time.Second, RequestDescription{Verb: "create"})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Fatalf("notes %q for a request that did not wait", notes)
	}
	res := make(chan *Ticket, 2)
	for _, verb := range []string{"create", "list"} {
		go func() {
			tk, err := c.Admit(ctx, qcls, Width{Seats: 1}, 10*time.Second, RequestDescription{Verb: verb})
			if err != nil {
				t.Error(err)
			}
			res <- tk
		}()
	}
	eventually(t, func() bool { return waiting("create") == 1 && waiting("list") == 1 })
	a.Finish() // dispatches both
	(<-res).Finish()
	(<-res).Finish()
	if waiting("create") != 0 || waiting("list") != 0 {
		t.Errorf("after dispatch: %v, want all left", count)
	}
	// A waiter that times out and one that is cancelled leave too.
	b, err := c.Admit(ctx, qcls, Width{Seats: 2}, time.Second, RequestDescription{Verb: "update"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finish()
	if _, err := c.Admit(ctx, qcls, Width{Seats: 1}, 20*time.Millisecond, RequestDescription{Verb: "patch"}); err == nil {
		t.Fatal("waiting on a full level: no time-out")
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := c.Admit(cctx, qcls, Width{Seats: 1}, time.Minute, RequestDescription{Verb: "watch"}); err == nil {
		t.Fatal("cancelled: no error")
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(notes[4:], " "); got != "patch+1 patch-1 watch+1 watch-1" {
		t.Errorf("notes after the dispatches: %q", got)
	}
	if len(notes) != 8 {
		t.Errorf("notes %q, want 8", notes)
	}
}

// An idle server of 600 seats with the default configuration: the limits,
// targets and fair fraction kube-apiserver v1.37.2 published (its
// /metrics, 10 s after start): the limited levels share the nominal
// limits' sum (602), each in proportion to its lower bound.
func TestAdjustmentAsReference(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{ServerConcurrencyLimit: 600, Metrics: m})
	c.Apply(defaultConfig())
	c.Tick()
	want := map[string][2]int{ // current limit, target
		"catch-all": {30, 13}, "global-default": {56, 24}, "leader-election": {58, 25}, "node-high": {170, 73},
		"system": {117, 50}, "workload-high": {114, 49}, "workload-low": {56, 24},
	}
	for name, w := range want {
		if got := c.Levels()[name].CurrentCL; got != w[0] {
			t.Errorf("%s: current limit %d, want %d", name, got, w[0])
		}
		if got := gaugeValue(m.targetSeats.WithLabelValues(name)); got != float64(w[1]) {
			t.Errorf("%s: target %v, want %d", name, got, w[1])
		}
		if got := gaugeValue(m.currentLimit.WithLabelValues(name)); got != float64(w[0]) {
			t.Errorf("%s: current_limit_seats %v, want %d", name, got, w[0])
		}
	}
	if got := gaugeValue(m.fairFrac); got != 2.3333333333333335 {
		t.Errorf("seat_fair_frac %v, want 2.3333333333333335", got)
	}
	if got := gaugeValue(m.upperLimit.WithLabelValues("catch-all")); got != 613 {
		t.Errorf("catch-all upper_limit_seats %v, want 613", got)
	}
}

func gaugeValue(g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		panic(err)
	}
	return m.GetGauge().GetValue()
}

// Upstream's queueset counts a dispatch attempt whose head request does
// not fit while seats are free (request_dispatch_no_accommodation_total),
// and observes each request's queue length after it enqueues, 1 for one
// dispatched at once (request_queue_length_after_enqueue).
func TestNoAccommodationAndQueueLength(t *testing.T) {
	pls := []*flowcontrolv1.PriorityLevelConfiguration{
		{ObjectMeta: metav1.ObjectMeta{Name: "q"}, Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](100), LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 1, QueueLengthLimit: 10}}}}},
	}
	fss := []*flowcontrolv1.FlowSchema{{ObjectMeta: metav1.ObjectMeta{Name: "fq"}, Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "q"}, MatchingPrecedence: 100,
		Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
			Subjects:      []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "u"}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true}},
		}},
	}}}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	// 2 seats: "q" has 100 shares of 100 + the mandatory levels' 5 + 0.
	c := New(Options{ServerConcurrencyLimit: 2, Metrics: m})
	c.Apply(fss, pls)
	cls := c.Classify(&Request{User: "u", IsResourceRequest: true, Verb: "list", Resource: "pods"})
	if lim := c.Levels()["q"].CurrentCL; lim != 2 {
		t.Fatalf("q's limit %d, want 2", lim)
	}
	one, err := c.Admit(context.Background(), cls, Width{Seats: 1}, time.Second, RequestDescription{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		tk, err := c.Admit(context.Background(), cls, Width{Seats: 2}, 10*time.Second, RequestDescription{})
		if err == nil {
			tk.Finish()
		}
		done <- err
	}()
	eventually(t, func() bool { return c.Levels()["q"].Waiting == 1 })
	// A seat is free but the 2-seat head does not fit.
	if got := counterValue(m.noAccommodationTotal.WithLabelValues("q", "fq")); got < 1 {
		t.Errorf("no accommodation %v, want >= 1", got)
	}
	one.Finish()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var hm dto.Metric
	if err := m.queueLength.WithLabelValues("q", "fq").(prometheus.Histogram).Write(&hm); err != nil {
		t.Fatal(err)
	}
	if h := hm.GetHistogram(); h.GetSampleCount() != 2 || h.GetSampleSum() != 2 {
		t.Errorf("queue length after enqueue: %d samples summing to %v, want 2 of 1", h.GetSampleCount(), h.GetSampleSum())
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// The same with a level that can neither lend nor borrow (the reference's
// /metrics after the session's "tiny" level, 1 share, lendable 0%,
// borrowing 0%): its bounds matter, and the fair fraction is the float
// upstream's sweep gives (601/258 computed in steps), not the quotient.
func TestAdjustmentAsReferenceBoundsMatter(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	c := New(Options{ServerConcurrencyLimit: 600, Metrics: m})
	fss, pls := defaultConfig()
	pls = append(pls, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "tiny"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1), LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 4, HandSize: 2, QueueLengthLimit: 50}}}}})
	c.Apply(fss, pls)
	c.Tick()
	want := map[string]int{"catch-all": 30, "global-default": 56, "leader-election": 58, "node-high": 170,
		"system": 116, "tiny": 3, "workload-high": 114, "workload-low": 56}
	for name, w := range want {
		if got := c.Levels()[name].CurrentCL; got != w {
			t.Errorf("%s: current limit %d, want %d", name, got, w)
		}
	}
	if got := gaugeValue(m.fairFrac); got != 2.329457364341085 {
		t.Errorf("seat_fair_frac %v, want 2.329457364341085", got)
	}
	if got := gaugeValue(m.upperLimit.WithLabelValues("workload-low")); got != 844 {
		t.Errorf("workload-low upper_limit_seats %v, want 844", got)
	}
}
