package apf

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// The max-in-flight limits of the fairness servers are small, so that one
// flooding client saturates its priority level on any machine, and its
// lists (3 seats) cannot take both cores even after borrowing: 6+3 = 9
// seats (global-default's nominal share ceil(9*20/245) = 1: a list runs
// alone; workload-low's ceil(9*100/245) = 4; workload-high's 2).
var seats9 = kapitest.WithFlags("--max-requests-inflight=6", "--max-mutating-requests-inflight=3")

const (
	flooders     = 400
	politeEvery  = 10 * time.Millisecond
	politeCount  = 150
	floodObjects = 250
)

// startFairnessServer starts a server with floodObjects ConfigMaps in
// namespace "flood" (what the flooder lists: 3 seats per list, 250 objects).
func startFairnessServer(t *testing.T, seats kapitest.Option) (*kapitest.Server, *identities) {
	srv := kapitest.Start(t, seats)
	cfg := rest.CopyConfig(srv.Config)
	cfg.QPS = -1
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := t.Context()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flood"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, floodObjects)
	for i := range floodObjects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := cs.CoreV1().ConfigMaps("flood").Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i)},
			}, metav1.CreateOptions{})
			errs <- err
		}()
		if i%20 == 19 {
			wg.Wait()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	ids := newIdentities(t, srv)
	// The suggested configuration is in place once its schemas are served.
	eventually(t, 30*time.Second, "suggested FlowSchemas", func() error {
		_, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
		return err
	})
	return srv, ids
}

// politeRun sends politeCount requests, one every politeEvery, and
// returns their latencies and the codes other than 200.
func politeRun(ctx context.Context, t *testing.T, c *userClient, path string) ([]time.Duration, []int) {
	var lat []time.Duration
	var bad []int
	tick := time.NewTicker(politeEvery)
	defer tick.Stop()
	for range politeCount {
		<-tick.C
		code, _, d, err := c.get(ctx, path)
		if err != nil {
			t.Fatalf("polite GET: %v", err)
		}
		if code != http.StatusOK {
			bad = append(bad, code)
		}
		lat = append(lat, d)
	}
	return lat, bad
}

type fairnessCase struct {
	flooder, polite     *userClient
	flooderFS, politeFS string
	flooderPL, politePL string
	flooderPath         string
}

// runFairness measures the polite client alone, then under a flood, and
// checks: the polite client never gets a 429 and its p99 stays within a
// small multiple of its unloaded p99; server side, its requests hardly
// waited in queue while the flooder's were queued and rejected.
func runFairness(t *testing.T, ids *identities, fc fairnessCase, politePath string) {
	ctx := t.Context()
	// Warm up the polite client's connection, then measure it alone.
	if code, _, _, err := fc.polite.get(ctx, politePath); err != nil || code != http.StatusOK {
		t.Fatalf("polite warm-up: %d %v", code, err)
	}
	unloaded, bad := politeRun(ctx, t, fc.polite, politePath)
	if len(bad) > 0 {
		t.Fatalf("polite client unloaded got %v", bad)
	}

	before := ids.metrics(t)
	floodCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var floodOK, flood429, floodOther atomic.Int64
	var floodMu sync.Mutex
	var floodLat []time.Duration
	for range flooders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for floodCtx.Err() == nil {
				code, _, d, err := fc.flooder.get(floodCtx, fc.flooderPath)
				switch {
				case err != nil:
				case code == http.StatusOK:
					floodOK.Add(1)
					floodMu.Lock()
					floodLat = append(floodLat, d)
					floodMu.Unlock()
				case code == http.StatusTooManyRequests:
					flood429.Add(1)
					// Honour Retry-After (1s), as client-go does.
					select {
					case <-floodCtx.Done():
					case <-time.After(time.Second):
					}
				default:
					floodOther.Add(1)
				}
			}
		}()
	}
	// Let the flood build its queues.
	time.Sleep(time.Second)
	var maxInQueue float64
	loaded, bad := politeRun(ctx, t, fc.polite, politePath)
	fams := ids.metrics(t)
	maxInQueue = counterSum(fams, "apiserver_flowcontrol_current_inqueue_requests", map[string]string{"flow_schema": fc.flooderFS})
	stop()
	wg.Wait()
	after := ids.metrics(t)

	if len(bad) > 0 {
		t.Errorf("polite client under flood got %d non-200 answers: %v", len(bad), bad)
	}
	pu, pl := p99(unloaded), p99(loaded)
	floodMu.Lock()
	fp50, fp90 := quantile(floodLat, 0.5), quantile(floodLat, 0.9)
	floodMu.Unlock()
	t.Logf("polite p50 unloaded %v, loaded %v", quantile(unloaded, 0.5), quantile(loaded, 0.5))
	t.Logf("polite p99 unloaded %v, loaded %v; flooder: %d ok (p50 %v, p90 %v), %d 429, %d other; flooder requests in queue mid-flood: %v",
		pu, pl, floodOK.Load(), fp50, fp90, flood429.Load(), floodOther.Load(), maxInQueue)
	// Client side, generous bounds: the flood also takes the machine's CPU
	// from the polite client (the flooder, the polite client and the
	// server share 2 cores with other work: a load average of 20 was seen
	// while developing this test), which no admission control can give
	// back, so the polite client's p99 carries scheduling stalls. What must
	// not happen is the polite client waiting behind the flooder's queue,
	// where the flooder's requests wait for seconds: its p90 must stay well
	// under the flooder's median, and its median near its unloaded median.
	// The server-side queue waits below are the precise measure.
	// Under the race detector these are logged only (see raceEnabled).
	clientErrorf := t.Errorf
	if raceEnabled {
		clientErrorf = t.Logf
	}
	// p90, not p99: a single scheduling stall of the shared machine (over
	// a second was seen, with the polite request never queued server
	// side) lands in the p99 of 150 requests.
	// The flooder's p90, not its median: since the levels share the
	// nominal limits' sum as upstream's (13 seats here, not 9), the
	// flooder's level borrows enough that half its requests pass in tens
	// of milliseconds, the order of the machine's own stalls.
	if p90 := quantile(loaded, 0.9); p90 > fp90/4 {
		clientErrorf("polite p90 under flood %v > a quarter of the flooder's p90 latency %v", p90, fp90)
	}
	if m, mu := quantile(loaded, 0.5), quantile(unloaded, 0.5); m > 20*mu+250*time.Millisecond {
		clientErrorf("polite median under flood %v > 20 x its unloaded median %v + 250ms", m, mu)
	}

	// Server side: the flooder was queued (its queue wait p99 is long) and
	// rejected; the polite client's waits were short.
	delta := func(name string, labels map[string]string) float64 {
		return counterSum(after, name, labels) - counterSum(before, name, labels)
	}
	rejected := delta("apiserver_flowcontrol_rejected_requests_total", map[string]string{"flow_schema": fc.flooderFS, "priority_level": fc.flooderPL})
	politeRejected := delta("apiserver_flowcontrol_rejected_requests_total", map[string]string{"flow_schema": fc.politeFS})
	politeDispatched := delta("apiserver_flowcontrol_dispatched_requests_total", map[string]string{"flow_schema": fc.politeFS, "priority_level": fc.politePL})
	if rejected == 0 || flood429.Load() == 0 {
		t.Errorf("flooder: %v rejections server side, %d 429s client side; want some", rejected, flood429.Load())
	}
	if politeRejected != 0 {
		t.Errorf("polite client: %v rejections server side", politeRejected)
	}
	if politeDispatched < politeCount {
		t.Errorf("polite client: %v dispatched in %s/%s, want >= %d", politeDispatched, fc.politeFS, fc.politePL, politeCount)
	}
	fb, fcount := histogram(after, "apiserver_flowcontrol_request_wait_duration_seconds", map[string]string{"flow_schema": fc.flooderFS, "execute": "true"})
	pb, pcount := histogram(after, "apiserver_flowcontrol_request_wait_duration_seconds", map[string]string{"flow_schema": fc.politeFS, "execute": "true"})
	floodWait, politeWait := quantileBound(fb, fcount, 0.99), quantileBound(pb, pcount, 0.99)
	t.Logf("server-side queue wait: flooder p90 <= %vs, p99 <= %vs; polite p99 <= %vs", quantileBound(fb, fcount, 0.9), floodWait, politeWait)
	// The flooder's lists of 250 objects were 3 seats wide.
	wb, wcount := histogram(after, "apiserver_flowcontrol_work_estimated_seats", map[string]string{"flow_schema": fc.flooderFS})
	if wcount == 0 || wb[2] == wcount {
		t.Errorf("flooder's estimated seats: %d requests, %d of them at most 2 seats; want lists of 3 seats", wcount, wb[2])
	}
	// The levels share the nominal limits' sum (13 on 9 seats: each
	// nominal limit is rounded up), as upstream's adjustment does, so the
	// flooder's level borrows more than 9 seats would give: its p90 wait
	// is in the (0.1s, 0.5s] buckets on an idle machine, its p99 longer.
	if floodWait < 0.5 {
		t.Errorf("flooder's queue wait p99 <= %vs: the flooder was not queued", floodWait)
	}
	if politeWait*10 > floodWait {
		t.Errorf("polite client's queue wait p99 <= %vs, flooder's p99 <= %vs: want a tenth of it at most", politeWait, floodWait)
	}
}

// TestFairnessSamePriorityLevel: the flooder and the polite user are both
// in global-default (the polite one through a FlowSchema of its own, so
// that the server's metrics tell them apart).
func TestFairnessSamePriorityLevel(t *testing.T) {
	srv, ids := startFairnessServer(t, seats9)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	if _, err := cs.FlowcontrolV1().FlowSchemas().Create(t.Context(), &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "apf-polite"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "global-default"},
			MatchingPrecedence:         1000,
			DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "polite"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, Namespaces: []string{"*"}, ClusterScope: true,
				}},
			}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	polite := ids.as(t, "polite")
	eventually(t, 30*time.Second, "polite classified by apf-polite", func() error {
		fs, err := cs.FlowcontrolV1().FlowSchemas().Get(t.Context(), "apf-polite", metav1.GetOptions{})
		if err != nil {
			return err
		}
		_, h, _, err := polite.get(t.Context(), "/api/v1/namespaces/default")
		if err != nil {
			return err
		}
		if got := h.Get("X-Kubernetes-PF-FlowSchema-UID"); got != string(fs.UID) {
			return errorf("flowschema UID header %q, want %q", got, fs.UID)
		}
		return nil
	})
	runFairness(t, ids, fairnessCase{
		flooder: ids.as(t, "flooder"), polite: polite,
		flooderFS: "global-default", politeFS: "apf-polite",
		flooderPL: "global-default", politePL: "global-default",
		flooderPath: "/api/v1/namespaces/flood/configmaps",
	}, "/api/v1/namespaces/default")
}

// TestFairnessAcrossPriorityLevels: the flooder is a service account
// (service-accounts -> workload-low), the polite client a kube-system
// service account (kube-system-service-accounts -> workload-high).
func TestFairnessAcrossPriorityLevels(t *testing.T) {
	_, ids := startFairnessServer(t, seats9)
	runFairness(t, ids, fairnessCase{
		flooder:   ids.as(t, "system:serviceaccount:flood:flooder", "system:serviceaccounts", "system:serviceaccounts:flood"),
		polite:    ids.as(t, "system:serviceaccount:kube-system:polite", "system:serviceaccounts", "system:serviceaccounts:kube-system"),
		flooderFS: "service-accounts", politeFS: "kube-system-service-accounts",
		flooderPL: "workload-low", politePL: "workload-high",
		flooderPath: "/api/v1/namespaces/flood/configmaps",
	}, "/api/v1/namespaces/default")
}
