package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// perOp (-per-op ROUNDS) measures where the CPU of the get and update rows
// goes instead of the usual rows: every target runs at once on its own
// data (the -objects custom resources created once), and in each round
// every target runs the rows of perOpRows, one target after the
// other (so a change in the machine's load weighs on each alike). For each
// row it records the CPU time (utime+stime from /proc) of the server, of
// the etcd process (-etcd-pid), and of kapi-bench itself, and the requests
// etcd served (its /metrics: Range and Txn calls, gRPC bytes in and out),
// and prints them per operation. With -server-profile, each row is then
// run again for -server-profile-seconds under each server's CPU profile.
func perOp(ctx context.Context, o options, targets []*target) error {
	type live struct {
		t    *target
		p    *proc
		res  dynamic.ResourceInterface
		raw  *rawGetter
		objs []*unstructured.Unstructured
	}
	var ls []*live
	defer func() {
		for _, l := range ls {
			_, _ = l.p.stop()
		}
	}()
	for _, t := range targets {
		fmt.Fprintf(os.Stderr, "== %s: preparing\n", t.name)
		if err := prepare(ctx, t); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		defer os.RemoveAll(t.dir)
		p, err := t.start(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		l := &live{t: t, p: p}
		ls = append(ls, l)
		if l.res, l.objs, err = setupObjects(ctx, p, o); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		if l.raw, err = newRawGetter(p.cfg, benchCollection); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	time.Sleep(3 * time.Second) // settle
	// Idle CPU (every server, etcd, kapi-bench) over 3 s: what the per-op
	// figures include besides the operations.
	idle := func() []time.Duration {
		d := []time.Duration{pidCPU(o.etcdPID), pidCPU(os.Getpid())}
		for _, l := range ls {
			d = append(d, l.p.cpu())
		}
		return d
	}
	i0 := idle()
	time.Sleep(3 * time.Second)
	i1 := idle()
	fmt.Printf("Idle CPU over 3 s: etcd %v, kapi-bench %v", i1[0]-i0[0], i1[1]-i0[1])
	for k, l := range ls {
		fmt.Printf(", %s %v", l.t.name, i1[2+k]-i0[2+k])
	}
	fmt.Println()
	type sum struct {
		n                            int
		wall, server, etcd, self     time.Duration
		ranges, txns, rxB, txB, rate float64
		watchIn, watchOut            float64
	}
	sums := map[string]*sum{}
	var order []string
	for round := range o.perOp {
		for _, l := range ls {
			for _, row := range perOpRows {
				fn := perOpRow(ctx, row, l.res, l.raw, l.objs)
				m0, err := etcdCounters(ctx, o.etcd)
				if err != nil {
					return err
				}
				s0, e0, c0 := l.p.cpu(), pidCPU(o.etcdPID), pidCPU(os.Getpid())
				begin := time.Now()
				rate, err := parallel(o.objects, o.conc, fn)
				if err != nil {
					return fmt.Errorf("%s %s: %w", l.t.name, row, err)
				}
				wall := time.Since(begin)
				s1, e1, c1 := l.p.cpu(), pidCPU(o.etcdPID), pidCPU(os.Getpid())
				m1, err := etcdCounters(ctx, o.etcd)
				if err != nil {
					return err
				}
				key := l.t.name + " " + row
				s := sums[key]
				if s == nil {
					s = &sum{}
					sums[key] = s
					order = append(order, key)
				}
				n := float64(o.objects)
				s.n += o.objects
				s.wall += wall
				s.server += s1 - s0
				s.etcd += e1 - e0
				s.self += c1 - c0
				s.ranges += m1["range"] - m0["range"]
				s.txns += m1["txn"] - m0["txn"]
				s.watchIn += m1["watchIn"] - m0["watchIn"]
				s.watchOut += m1["watchOut"] - m0["watchOut"]
				s.rxB += m1["rx"] - m0["rx"]
				s.txB += m1["tx"] - m0["tx"]
				s.rate += rate
				fmt.Fprintf(os.Stderr, "round %d %s: %.0f/s, server %.0f µs/op, etcd %.0f µs/op, bench %.0f µs/op, Range %.2f/op, Txn %.2f/op (load %s)\n",
					round, key, rate, us(s1-s0)/n, us(e1-e0)/n, us(c1-c0)/n, (m1["range"]-m0["range"])/n, (m1["txn"]-m0["txn"])/n, loadAvg())
			}
		}
	}
	// -server-profile: each server's CPU profile of each row, run again
	// (not counted above) for the profile's length.
	if o.serverProfile != "" {
		for _, l := range ls {
			for _, row := range perOpRows {
				fn := perOpRow(ctx, row, l.res, l.raw, l.objs)
				wait := l.p.serverProfile(ctx, o.serverProfile, l.t.name, row, o.profileSeconds)
				end := time.Now().Add(time.Duration(o.profileSeconds) * time.Second)
				for time.Now().Before(end) {
					if _, err := parallel(o.objects, o.conc, fn); err != nil {
						return fmt.Errorf("%s %s (profile): %w", l.t.name, row, err)
					}
				}
				wait()
			}
		}
	}
	fmt.Printf("CPU and etcd requests per operation, c=%d, %d rounds of %d operations (sums over the rounds):\n\n", o.conc, o.perOp, o.objects)
	fmt.Println("| row | ops/s (mean) | server µs/op | etcd µs/op | kapi-bench µs/op | all µs/op | etcd Range/op | etcd Txn/op | watch msgs in/op | watch msgs out/op | etcd bytes in/op | etcd bytes out/op |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, key := range order {
		s := sums[key]
		n := float64(s.n)
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.3f | %.3f | %.0f | %.0f |\n", key, s.rate/float64(o.perOp),
			us(s.server)/n, us(s.etcd)/n, us(s.self)/n, us(s.server+s.etcd+s.self)/n, s.ranges/n, s.txns/n, s.watchIn/n, s.watchOut/n, s.rxB/n, s.txB/n)
	}
	return nil
}

// perOpRows are the rows of -per-op: "get" is the get row (a consistent
// get, resourceVersion unset), "get-rv0" the same with resourceVersion
// "0" (served from the watch cache without reading etcd's revision, by
// kapi and the reference alike: the difference is what a consistent get's
// freshness costs), "get-raw" the get read raw (rawGetter: the same
// request, its answer not decoded), "update" the update row.
var perOpRows = []string{"get", "get-rv0", "get-raw", "update"}

func perOpRow(ctx context.Context, row string, res dynamic.ResourceInterface, raw *rawGetter, objs []*unstructured.Unstructured) func(i int) error {
	switch row {
	case "get-raw":
		return func(i int) error { return raw.get(ctx, objs[i].GetName()) }
	case "get-rv0":
		return func(i int) error {
			_, err := res.Get(ctx, objs[i].GetName(), metav1.GetOptions{ResourceVersion: "0"})
			return err
		}
	case "update":
		return func(i int) error { return update(ctx, res, objs, i, "") }
	default:
		return func(i int) error {
			_, err := res.Get(ctx, objs[i].GetName(), metav1.GetOptions{})
			return err
		}
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return "?"
	}
	return f[0]
}

// setupObjects makes the benchmark's namespace, CRD and -objects custom
// resources on p.
func setupObjects(ctx context.Context, p *proc, o options) (dynamic.ResourceInterface, []*unstructured.Unstructured, error) {
	cs, err := kubernetes.NewForConfig(p.cfg)
	if err != nil {
		return nil, nil, err
	}
	ext, err := apiextensionsclient.NewForConfig(p.cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(p.cfg)
	if err != nil {
		return nil, nil, err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}, metav1.CreateOptions{}); err != nil {
		return nil, nil, fmt.Errorf("create namespace: %w", err)
	}
	if err := installCRD(ctx, ext, dyn); err != nil {
		return nil, nil, err
	}
	res := dyn.Resource(benchGVR).Namespace(benchNamespace)
	objs := make([]*unstructured.Unstructured, o.objects)
	if _, err := parallel(o.objects, o.conc, func(i int) error {
		obj, err := res.Create(ctx, thing(i), metav1.CreateOptions{})
		objs[i] = obj
		return err
	}); err != nil {
		return nil, nil, fmt.Errorf("create: %w", err)
	}
	return res, objs, nil
}

// pidCPU is process pid's user+system CPU time so far (0 if pid is 0 or
// gone).
func pidCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	return statCPU(fmt.Sprintf("/proc/%d/stat", pid))
}

// etcdCounters reads etcd's request counters from its /metrics: "range"
// and "txn" (gRPC KV calls handled), "watchIn" and "watchOut" (messages
// received and sent on watch streams: watch creations and progress
// requests in, events and progress notifications out), "rx" and "tx" (gRPC
// bytes).
func etcdCounters(ctx context.Context, etcd string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(etcd, "/")+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("etcd metrics: %w", err)
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var key string
		switch {
		case strings.HasPrefix(line, "grpc_server_handled_total{") && strings.Contains(line, `grpc_method="Range"`):
			key = "range"
		case strings.HasPrefix(line, "grpc_server_handled_total{") && strings.Contains(line, `grpc_method="Txn"`):
			key = "txn"
		case strings.HasPrefix(line, "grpc_server_msg_received_total{") && strings.Contains(line, `grpc_method="Watch"`):
			key = "watchIn"
		case strings.HasPrefix(line, "grpc_server_msg_sent_total{") && strings.Contains(line, `grpc_method="Watch"`):
			key = "watchOut"
		case strings.HasPrefix(line, "etcd_network_client_grpc_received_bytes_total "):
			key = "rx"
		case strings.HasPrefix(line, "etcd_network_client_grpc_sent_bytes_total "):
			key = "tx"
		default:
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("etcd metrics: %q: %w", line, err)
		}
		m[key] += v
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return m, sc.Err()
}
