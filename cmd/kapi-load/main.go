// Command kapi-load measures a kapi server on this machine.
//
//	kapi-load get     -kubeconfig K -path /version -c 32 -n 20000 [-http1]
//	kapi-load startup -kapi ./kapi -runs 10 [-- extra kapi flags]
//	kapi-load crud    -kubeconfig K -c 8 -n 2000
//	kapi-load watch   -kubeconfig K -w 1000 -e 200
//	kapi-load crd     -kubeconfig K -c 8 -n 2000 [-cel]
//	kapi-load pods    -kubeconfig K -c 16 -n 10000 [-lists 10 -page 500]
//
// "get" sends n authenticated GETs over c concurrent workers and prints the
// throughput and latency percentiles. "startup" starts the kapi binary
// runs times on a prepared data dir and prints the time from process start
// to the first 200 from /readyz, the server's CPU time and page faults by
// then, and the RSS of the idle server. "crud"
// measures create/get/update/list/delete of configmaps through the whole
// server (client-go, protobuf, HTTP/2) and "watch" event delivery latency
// to w watchers. "crd" measures the time from creating a CRD to it being
// Established and served, then the same operations as "crud" on custom
// resources (dynamic client, JSON), with -cel under a CEL rule. "pods"
// creates, gets and lists n Pods of about 4 KiB each and reports list
// latencies and the server's memory.
//
// It only ever talks to the address in the kubeconfig or to the kapi it
// started on loopback, and every loop is bounded by -n / -runs.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: kapi-load get|startup|crud|crd|watch|pods [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "get":
		err = runGet(os.Args[2:])
	case "startup":
		err = runStartup(os.Args[2:])
	case "crud":
		err = runCRUD(os.Args[2:])
	case "watch":
		err = runWatch(os.Args[2:])
	case "crd":
		err = runCRD(os.Args[2:])
	case "pods":
		err = runPods(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func runGet(args []string) error {
	fs := flag.NewFlagSet("get", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "kapi-data/admin.kubeconfig", "admin kubeconfig of the server")
	path := fs.String("path", "/version", "path to GET")
	conc := fs.Int("c", 32, "concurrent workers")
	n := fs.Int("n", 20000, "total requests")
	http1 := fs.Bool("http1", false, "use HTTP/1.1 instead of HTTP/2")
	_ = fs.Parse(args)

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	tlsCfg, err := tlsConfigFor(cfg)
	if err != nil {
		return err
	}
	var rt http.RoundTripper
	if *http1 {
		tlsCfg.NextProtos = []string{"http/1.1"}
		rt = &http.Transport{TLSClientConfig: tlsCfg, MaxIdleConnsPerHost: *conc, MaxConnsPerHost: *conc}
	} else {
		rt = &http2.Transport{TLSClientConfig: tlsCfg}
	}
	client := &http.Client{Transport: rt, Timeout: 30 * time.Second}
	url := cfg.Host + *path

	lat := make([]time.Duration, *n)
	var next, failures atomic.Int64
	var firstFailure atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < *conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(*n) {
					return
				}
				t0 := time.Now()
				resp, err := client.Get(url)
				if err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d: %.300s", resp.StatusCode, body)
					}
				}
				if err != nil {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, err.Error())
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	proto := "HTTP/2"
	if *http1 {
		proto = "HTTP/1.1"
	}
	fmt.Printf("GET %s %s c=%d n=%d: %.0f req/s, p50 %v, p99 %v, max %v, failures %d\n",
		*path, proto, *conc, *n, float64(*n)/elapsed.Seconds(), lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1], failures.Load())
	if failures.Load() > 0 {
		return fmt.Errorf("some requests failed, first: %v", firstFailure.Load())
	}
	return nil
}

func tlsConfigFor(cfg *rest.Config) (*tls.Config, error) {
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	if tc == nil {
		return nil, errors.New("kubeconfig has no TLS settings")
	}
	return tc, nil
}

func runStartup(args []string) error {
	fs := flag.NewFlagSet("startup", flag.ExitOnError)
	kapi := fs.String("kapi", "./kapi", "kapi binary")
	runs := fs.Int("runs", 10, "number of starts")
	dataDir := fs.String("data-dir", "", "data dir (default: a new temporary dir, prepared by a first, unmeasured start)")
	_ = fs.Parse(args)
	extra := fs.Args()

	dir := *dataDir
	if dir == "" {
		d, err := os.MkdirTemp("", "kapi-startup-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	// First start creates the PKI and the etcd data; not measured.
	if _, _, err := startOnce(*kapi, dir, extra); err != nil {
		return fmt.Errorf("warm-up start: %w", err)
	}
	var times, cpus []time.Duration
	var rss, anon, file, minflt, majflt []int64
	for i := 0; i < *runs; i++ {
		d, r, err := startOnce(*kapi, dir, extra)
		if err != nil {
			return err
		}
		times = append(times, d)
		rss = append(rss, r.rss)
		anon = append(anon, r.anon)
		file = append(file, r.file)
		cpus = append(cpus, r.cpu)
		minflt = append(minflt, r.minflt)
		majflt = append(majflt, r.majflt)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	for _, s := range [][]int64{rss, anon, file, minflt, majflt} {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	}
	fmt.Printf("start to first 200 on /readyz over %d runs (%s): min %v, median %v, max %v; idle RSS median %d MiB\n",
		*runs, strings.Join(extra, " "), times[0], times[len(times)/2], times[len(times)-1], rss[len(rss)/2]>>20)
	// The file-backed part is the binary's pages; how much of it a start
	// maps depends on the page cache's folio sizes as much as on the code
	// run (docs/performance-history.md, "Session 12: the process's start and idle
	// RSS"), so it is printed apart from the anonymous part.
	fmt.Printf("idle RSS median: %d MiB anonymous, %d MiB file-backed\n", anon[len(anon)/2]>>20, file[len(file)/2]>>20)
	fmt.Printf("server CPU from exec to the first 200 on /readyz: min %v, median %v, max %v; page faults by then (median): %d minor, %d major\n",
		cpus[0].Round(time.Millisecond/10), cpus[len(cpus)/2].Round(time.Millisecond/10), cpus[len(cpus)-1].Round(time.Millisecond/10),
		minflt[len(minflt)/2], majflt[len(majflt)/2])
	return nil
}

// startStats is what startOnce reads of the server process: its RSS once
// idle, and the CPU time and page faults it had used when /readyz first
// answered 200.
type startStats struct {
	rss, anon, file int64
	cpu             time.Duration
	minflt, majflt  int64
}

// startOnce starts kapi on a free port, measures the time to the first 200
// from /readyz and the RSS a moment later, then stops it with SIGTERM.
func startOnce(kapi, dir string, extra []string) (time.Duration, startStats, error) {
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	_ = os.Remove(kubeconfig)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kapi, append([]string{"--data-dir", dir, "--secure-port", "0"}, extra...)...)
	cmd.Stderr = io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, startStats{}, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	for ctx.Err() == nil {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err == nil {
			tc, err := tlsConfigFor(cfg)
			if err != nil {
				return 0, startStats{}, err
			}
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: time.Second}
			resp, err := client.Get(cfg.Host + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					d := time.Since(start)
					st := readyStatsOf(cmd.Process.Pid)
					time.Sleep(500 * time.Millisecond)
					st.rss, st.anon, st.file = rssOf(cmd.Process.Pid)
					return d, st, nil
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, startStats{}, errors.New("kapi did not become ready within 60s")
}

// readyStatsOf reads a process's CPU time (the sum of its threads'
// schedstat run times, in nanoseconds; /proc/PID/stat's utime and stime
// count 10 ms ticks) and its page faults (/proc/PID/stat fields 10 and 12).
// Zero where /proc does not tell.
func readyStatsOf(pid int) startStats {
	var st startStats
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue
		}
		var ns int64
		if _, err := fmt.Sscanf(string(b), "%d", &ns); err == nil {
			st.cpu += time.Duration(ns)
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return st
	}
	// The command name (field 2) may hold spaces; fields count from
	// after its closing parenthesis, which is field 3.
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 {
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 9 {
			fmt.Sscanf(f[7], "%d", &st.minflt)
			fmt.Sscanf(f[9], "%d", &st.majflt)
		}
	}
	return st
}

// rssOf returns a process's resident set size and its anonymous and
// file-backed parts (/proc/PID/status VmRSS, RssAnon, RssFile), in bytes;
// zero where /proc does not tell.
func rssOf(pid int) (rss, anon, file int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch name {
		case "VmRSS":
			dst = &rss
		case "RssAnon":
			dst = &anon
		case "RssFile":
			dst = &file
		default:
			continue
		}
		var kb int64
		fmt.Sscanf(strings.TrimSpace(value), "%d", &kb)
		*dst = kb << 10
	}
	return rss, anon, file
}
