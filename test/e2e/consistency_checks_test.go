package e2e

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

const consistencyChecksFamily = "apiserver_storage_consistency_checks_total"

// consistencyCheckSeries matches one series of the family:
// resource[.group] and status.
var consistencyCheckSeries = regexp.MustCompile(`^apiserver_storage_consistency_checks_total\{group="([^"]*)",resource="([^"]*)",status="([^"]*)"\} (\d+)$`)

// TestStorageConsistencyChecks: on etcd, every watch cache
// kube-apiserver v1.37.2 has is checked against etcd
// (DetectCacheInconsistency) and each check counted in
// apiserver_storage_consistency_checks_total, with the reference's HELP
// and TYPE lines and its resources (testdata/metrics/consistency_checks.txt,
// read from the reference's first round of checks): none of kapi's
// internal stores, no events (kube-apiserver keeps them out of its watch
// cache). Checks run every 5 to 7.5 minutes in production; this server's
// period is shortened. Lists still work between the checks.
func TestStorageConsistencyChecks(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithEmbeddedEtcd(), kapitest.WithOptions(func(o *kapitest.Options) {
		o.ConsistencyCheckPeriod = 100 * time.Millisecond
	}))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/metrics/consistency_checks.txt")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range strings.Split(string(golden), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			want = append(want, l)
		}
	}

	// Every checker has succeeded twice (the first wait is at most
	// 150ms). A check before the cache's first list counts "error"
	// ("cache is not ready", as upstream's): possible here, where the
	// caches start less than a period before the server is ready; a
	// failure is not.
	var lines, got []string
	var errs []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		lines = familyLines(metricsText(t, srv.Config), consistencyChecksFamily)
		got, errs = got[:0], errs[:0]
		twice := true
		for _, l := range lines[min(2, len(lines)):] {
			m := consistencyCheckSeries.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("malformed series %q", l)
			}
			switch m[3] {
			case "success":
				got = append(got, strings.TrimSuffix(m[2]+"."+m[1], "."))
				twice = twice && m[4] != "1"
			case "error":
				errs = append(errs, l)
			default:
				t.Fatalf("a check of %s.%s: %s", m[2], m[1], l)
			}
		}
		slices.Sort(got)
		if twice && slices.Equal(got, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("resources checked successfully twice: got\n%q\nwant\n%q\nlines %q", got, want, lines)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(errs) > 0 {
		t.Logf("checks before a cache was ready: %q", errs)
	}
	wantHead := []string{
		"# HELP apiserver_storage_consistency_checks_total [ALPHA] Counter for status of consistency checks between etcd and watch cache",
		"# TYPE apiserver_storage_consistency_checks_total counter",
	}
	if !slices.Equal(lines[:2], wantHead) {
		t.Errorf("got\n%q\nwant\n%q", lines[:2], wantHead)
	}
	// Exact and paginated lists are served throughout.
	list, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{
		ResourceVersion: list.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}); err != nil {
		t.Fatal(err)
	}
}

// TestStorageConsistencyChecksNone: no series before a first check (at
// least 5 minutes after start, as the reference's), and none ever on the
// memory backend, which has no watch cache and no etcd to compare with.
func TestStorageConsistencyChecksNone(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []kapitest.Option
	}{
		{"etcd-default-period", []kapitest.Option{kapitest.WithEmbeddedEtcd()}},
		{"memory", []kapitest.Option{kapitest.WithOptions(func(o *kapitest.Options) {
			o.ConsistencyCheckPeriod = 10 * time.Millisecond
		})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := kapitest.Start(t, tc.opts...)
			cs := kubernetes.NewForConfigOrDie(srv.Config)
			if _, err := cs.CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond)
			if got := familyLines(metricsText(t, srv.Config), consistencyChecksFamily); len(got) != 0 {
				t.Errorf("got %q, want no %s", got, consistencyChecksFamily)
			}
		})
	}
}
