// Command kapi-bench measures kapi side by side with an upstream reference
// server on this machine and prints the figures and their ratios.
//
//	kapi-bench -kapi ./kapi [-etcd http://127.0.0.1:2379] [-reference ./kube-apiserver]
//	           [-targets memory,embedded,etcd,reference] [-starts 5]
//	           [-objects 2000] [-writes 60000] [-watchers 100,1000]
//
// Targets (all that can run, or those -targets names): kapi on the memory
// backend, kapi on its embedded etcd, and, when -etcd names an external
// etcd, kapi on it and the reference on it (each under its own key
// prefix). The reference is a kube-apiserver binary (or any server taking
// its flags; see -reference-flags) built from public source by
// hack/build-reference.sh. Without a reference the tool says so and prints
// kapi's figures alone.
//
// Rows, as issue 18's table: start → /readyz 200 (median of -starts runs,
// interleaved across the targets, each data dir prepared by a first
// unmeasured start), idle RSS, create / get / update of custom resources
// with 32 workers, consistent list of -objects custom resources (read raw
// with the items counted, and again with client-go's dynamic client), watch
// latency from send (p99) with each -watchers count and the server CPU per
// delivered event, RSS after -writes updates, SIGTERM → exit (median).
//
// Diagnostics (stderr, not rows): -server-profile saves each server's CPU
// profile during each watch row; -etcd-floor measures etcd's own latency
// from a write to its watch event, the floor under the watch rows on -etcd;
// -per-op ROUNDS (with -etcd and -etcd-pid) replaces the rows by the get
// and update rows run ROUNDS times on every target and prints where their
// CPU goes per operation (each server, etcd, kapi-bench) and the etcd
// requests each costs (see perop.go).
//
// It talks only to the servers it started, on 127.0.0.1, and to -etcd,
// which must be a loopback address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"
)

type options struct {
	kapi           string
	etcd           string
	reference      string
	referenceFlags string
	starts         int
	objects        int
	lists          int
	writes         int
	watchers       []int
	watchEvents    int
	conc           int
	targets        []string
	dump           string
	// serverProfile, profileSeconds: -server-profile, -server-profile-seconds.
	serverProfile  string
	profileSeconds int
	// etcdFloor: -etcd-floor.
	etcdFloor int
	// perOp, etcdPID: -per-op, -etcd-pid.
	perOp   int
	etcdPID int
}

func main() {
	o := options{}
	flag.StringVar(&o.kapi, "kapi", "./kapi", "kapi binary")
	flag.StringVar(&o.etcd, "etcd", "", "an external etcd (loopback URL, e.g. http://127.0.0.1:2379): kapi and the reference run on it too")
	flag.StringVar(&o.reference, "reference", "", "the reference server binary (kube-apiserver built from public source; needs -etcd)")
	flag.StringVar(&o.referenceFlags, "reference-flags", defaultReferenceFlags, "the reference's flags; {etcd} {prefix} {port} {dir} are replaced")
	flag.IntVar(&o.starts, "starts", 5, "measured starts per target (median)")
	flag.IntVar(&o.objects, "objects", 2000, "custom resources created, read, updated and listed")
	flag.IntVar(&o.lists, "lists", 20, "sequential lists of each list row (the first finds no kept encodings)")
	flag.IntVar(&o.writes, "writes", 60000, "updates before the last RSS reading")
	watchers := flag.String("watchers", "100,1000", "watcher counts of the watch rows")
	flag.IntVar(&o.watchEvents, "watch-events", 200, "updates each watch row sends")
	flag.IntVar(&o.conc, "c", 32, "concurrent workers of the create/get/update rows")
	flag.StringVar(&o.dump, "dump", "", "a directory: save smaps_rollup, the heap profile and /metrics of each target when idle and after the writes")
	flag.StringVar(&o.serverProfile, "server-profile", "", "a directory: save each server's CPU profile (/debug/pprof/profile) taken during each watch row there")
	flag.IntVar(&o.profileSeconds, "server-profile-seconds", 3, "length of the -server-profile profiles, from the first update of the row")
	flag.IntVar(&o.etcdFloor, "etcd-floor", 0, "rounds of etcd's own write → watch latency (the floor under the watch rows on -etcd; see etcdfloor.go) measured first, on stderr")
	flag.IntVar(&o.perOp, "per-op", 0, "rounds: instead of the rows, run the get and update rows this many times on every target (all running at once) and print the CPU per operation of each server, of etcd (-etcd-pid) and of kapi-bench, and etcd's requests per operation (needs -etcd)")
	flag.IntVar(&o.etcdPID, "etcd-pid", 0, "the -etcd process's id, for its CPU time in -per-op")
	cpuProfile := flag.String("cpuprofile", "", "a file: write the benchmark client's own CPU profile there (the servers' are at their /debug/pprof/)")
	targets := flag.String("targets", "", "comma-separated targets to measure, of "+strings.Join(targetNames, ",")+" (default: all that can run)")
	flag.Parse()
	if *targets != "" {
		for _, t := range strings.Split(*targets, ",") {
			o.targets = append(o.targets, strings.TrimSpace(t))
		}
	}
	for _, s := range strings.Split(*watchers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fail(fmt.Errorf("-watchers: %q is not a positive count", s))
		}
		o.watchers = append(o.watchers, n)
	}
	if err := o.validate(); err != nil {
		fail(err)
	}
	for _, dir := range []string{o.dump, o.serverProfile} {
		if dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				fail(err)
			}
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
	}
	err := run(context.Background(), o)
	if *cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "Error:", err)
	os.Exit(1)
}

func (o options) validate() error {
	if o.starts < 1 || o.objects < 1 || o.writes < 0 || o.conc < 1 || o.watchEvents < 1 {
		return errors.New("-starts, -objects, -c and -watch-events must be positive, -writes not negative")
	}
	if o.etcd != "" {
		u, err := url.Parse(o.etcd)
		if err != nil || u.Hostname() == "" {
			return fmt.Errorf("-etcd %q: not a URL", o.etcd)
		}
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("-etcd %q: only loopback addresses are measured", o.etcd)
		}
	}
	for _, t := range o.targets {
		if !slices.Contains(targetNames, strings.TrimSpace(t)) {
			return fmt.Errorf("-targets: unknown target %q (known: %s)", t, strings.Join(targetNames, ","))
		}
	}
	if o.perOp > 0 && o.etcd == "" {
		return errors.New("-per-op needs -etcd: it reads etcd's request counters")
	}
	if o.reference != "" && o.etcd == "" {
		return errors.New("-reference needs -etcd: the reference runs on the same etcd as kapi")
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// targetNames are the -targets names, in the order they are measured
// and printed (the reference last: the ratios are against it).
var targetNames = []string{"memory", "embedded", "etcd", "reference"}

func run(ctx context.Context, o options) error {
	stamp := time.Now().UnixNano() % 1e9
	want := func(name string) bool { return len(o.targets) == 0 || slices.Contains(o.targets, name) }
	var targets []*target
	if want("memory") {
		targets = append(targets, kapiTarget("kapi memory", o.kapi, "--storage-backend=memory"))
	}
	if want("embedded") {
		targets = append(targets, kapiTarget("kapi embedded etcd", o.kapi))
	}
	var ref *target
	if o.etcd != "" {
		if want("etcd") {
			targets = append(targets, kapiTarget("kapi on etcd", o.kapi, "--etcd-servers="+o.etcd, fmt.Sprintf("--etcd-prefix=/kapi-bench-%d", stamp)))
		}
		if o.reference != "" && want("reference") {
			ref = referenceTarget("reference", o.reference, o.referenceFlags, o.etcd, fmt.Sprintf("/reference-bench-%d", stamp))
			targets = append(targets, ref)
		}
	}
	if ref == nil {
		fmt.Println("No reference server (-reference, -etcd and the reference target): printing kapi's figures alone.")
	}
	if len(targets) == 0 {
		return errors.New("-targets selects no target that can run (etcd and reference need -etcd, reference needs -reference)")
	}
	if o.etcdFloor > 0 && o.etcd != "" {
		if err := etcdFloor(ctx, o.etcd, o.etcdFloor, o.watchEvents); err != nil {
			return err
		}
	}
	if o.perOp > 0 {
		return perOp(ctx, o, targets)
	}
	results := make([]*result, len(targets))
	for i, t := range targets {
		results[i] = &result{name: t.name}
		fmt.Fprintf(os.Stderr, "== %s: preparing\n", t.name)
		err := prepare(ctx, t)
		if t.dir != "" {
			defer os.RemoveAll(t.dir)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	if err := measureStarts(ctx, targets, results, o.starts); err != nil {
		return err
	}
	for i, t := range targets {
		if err := measureLoad(ctx, t, o, results[i]); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	printTable(os.Stdout, o, results, ref != nil)
	return nil
}
