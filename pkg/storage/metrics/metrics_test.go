package metrics

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// gather returns the series of family name as `l1="v1",... value`
// (histograms: their count), sorted.
func gather(t *testing.T, reg *prometheus.Registry, name string) []string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
			out = append(out, fmt.Sprintf("%s %g", strings.Join(labels, ","), v))
		}
	}
	sort.Strings(out)
	return out
}

func newRegistry(t *testing.T) (*prometheus.Registry, *Metrics) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return reg, m
}

func TestObjectCounts(t *testing.T) {
	reg, m := newRegistry(t)
	cms := m.Resource(schema.GroupResource{Resource: "configmaps"})
	deps := m.Resource(schema.GroupResource{Group: "apps", Resource: "deployments"})
	untrackCMs := cms.TrackObjects(func(context.Context) (int64, error) { return 3, nil })
	deps.TrackObjects(func(context.Context) (int64, error) { return 0, errors.New("not ready") })

	// The deprecated apiserver_storage_objects is hidden in v1.37.
	if got := gather(t, reg, "apiserver_storage_objects"); len(got) != 0 {
		t.Errorf("apiserver_storage_objects: got %q, want no series", got)
	}
	want := []string{`group="",resource="configmaps" 3`, `group="apps",resource="deployments" -1`}
	if got := gather(t, reg, "apiserver_resource_objects"); strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("apiserver_resource_objects: got %q, want %q", got, want)
	}

	// A new source replaces the old one; the old one's untrack then does
	// nothing.
	untrackNew := cms.TrackObjects(func(context.Context) (int64, error) { return 7, nil })
	untrackCMs()
	if got := gather(t, reg, "apiserver_resource_objects"); len(got) != 2 || got[0] != `group="",resource="configmaps" 7` {
		t.Errorf("after replacing: got %q, want configmaps at 7", got)
	}
	untrackNew()
	if got := gather(t, reg, "apiserver_resource_objects"); len(got) != 1 || !strings.HasPrefix(got[0], `group="apps",resource="deployments"`) {
		t.Errorf("after untracking: got %q, want deployments only", got)
	}
}

func TestResourceRecording(t *testing.T) {
	reg, m := newRegistry(t)
	r := m.Resource(schema.GroupResource{Group: "apps", Resource: "deployments"})
	r.EtcdRequest(OpGet, time.Now(), nil)
	r.EtcdRequest(OpGet, time.Now(), errors.New("unavailable"))
	r.EtcdEvent()
	r.EtcdBookmark()
	r.DecodeError()
	r.StorageList(10, 8, 2)
	r.StorageList(1, 1, 1)
	r.ListLatency(true, time.Now())
	for _, c := range []struct{ family, want string }{
		{"etcd_request_duration_seconds", `group="apps",operation="get",resource="deployments" 2`},
		{"etcd_requests_total", `group="apps",operation="get",resource="deployments" 2`},
		{"etcd_request_errors_total", `group="apps",operation="get",resource="deployments" 1`},
		{"apiserver_storage_events_received_total", `group="apps",resource="deployments" 1`},
		{"etcd_bookmark_total", `group="apps",resource="deployments" 1`},
		{"apiserver_storage_decode_errors_total", `group="apps",resource="deployments" 1`},
		{"apiserver_storage_list_total", `group="apps",index="",resource="deployments",storage="etcd" 2`},
		{"apiserver_storage_list_duration_seconds", `group="apps",resource="deployments",streamed="true" 1`},
		{"apiserver_storage_list_fetched_objects_total", `group="apps",index="",resource="deployments",storage="etcd" 11`},
		{"apiserver_storage_list_evaluated_objects_total", `group="apps",resource="deployments",storage="etcd" 9`},
		{"apiserver_storage_list_returned_objects_total", `group="apps",resource="deployments",storage="etcd" 3`},
	} {
		if got := gather(t, reg, c.family); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: got %q, want [%q]", c.family, got, c.want)
		}
	}
}

func TestCacheRecording(t *testing.T) {
	reg, m := newRegistry(t)
	c := m.Resource(schema.GroupResource{Resource: "pods"}).Cache()
	c.Capacity(0, 100) // initial: no change counted
	c.Capacity(100, 200)
	c.Capacity(200, 200)
	c.Capacity(200, 100)
	c.Initialized(1_234_567_890_123_456_789, 30*time.Millisecond)
	c.EventReceived()
	c.EventReceived()
	c.EventDispatched()
	c.InitEvent()
	c.WatcherTerminated()
	c.ReadWait(10 * time.Millisecond)
	c.ConsistentRead(true, false)
	c.ConsistentRead(true, true)
	c.List(5, 2)
	pods := `group="",resource="pods"`
	for _, ch := range []struct{ family, want string }{
		{"watch_cache_capacity", pods + " 100"},
		{"watch_cache_capacity_increase_total", pods + " 1"},
		{"watch_cache_capacity_decrease_total", pods + " 1"},
		{"apiserver_watch_cache_initializations_total", pods + " 1"},
		// Truncated to the 15 least significant digits.
		{"apiserver_watch_cache_resource_version", pods + " 5.67890123456789e+14"},
		{"apiserver_watch_cache_events_received_total", pods + " 2"},
		{"apiserver_watch_cache_events_dispatched_total", pods + " 1"},
		{"apiserver_init_events_total", pods + " 1"},
		{"apiserver_terminated_watchers_total", pods + " 1"},
		{"apiserver_watch_cache_read_wait_seconds", pods + " 1"},
		{"apiserver_watch_cache_initialization_duration_seconds", pods + " 1"},
		{"apiserver_storage_list_total", `group="",index="",resource="pods",storage="watchcache" 1`},
		{"apiserver_storage_list_fetched_objects_total", `group="",index="",resource="pods",storage="watchcache" 5`},
		{"apiserver_storage_list_evaluated_objects_total", `group="",resource="pods",storage="watchcache" 0`},
		{"apiserver_storage_list_returned_objects_total", `group="",resource="pods",storage="watchcache" 2`},
	} {
		if got := gather(t, reg, ch.family); len(got) != 1 || got[0] != ch.want {
			t.Errorf("%s: got %q, want [%q]", ch.family, got, ch.want)
		}
	}
	want := []string{
		`fallback="false",group="",resource="pods",success="true" 1`,
		`fallback="true",group="",resource="pods",success="true" 1`,
	}
	if got := gather(t, reg, "apiserver_watch_cache_consistent_read_total"); strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("consistent reads: got %q, want %q", got, want)
	}
}

func TestNilRecordsNothing(t *testing.T) {
	var m *Metrics
	r := m.Resource(schema.GroupResource{Resource: "pods"})
	if r != nil {
		t.Fatal("a nil Metrics gave a Resource")
	}
	r.EtcdRequest(OpGet, time.Now(), nil)
	r.EtcdEvent()
	r.EtcdBookmark()
	r.DecodeError()
	r.StorageList(1, 1, 1)
	r.ListLatency(true, time.Now())
	r.TrackObjects(func(context.Context) (int64, error) { return 0, nil })()
	c := r.Cache()
	c.Capacity(0, 1)
	c.Initialized(1, time.Second)
	c.EventReceived()
	c.EventDispatched()
	c.InitEvent()
	c.WatcherTerminated()
	c.ReadWait(time.Second)
	c.ConsistentRead(true, true)
	c.List(1, 1)
}

func TestNewRegistersOnce(t *testing.T) {
	reg, _ := newRegistry(t)
	if _, err := New(reg); err == nil {
		t.Error("second New on one registry: got no error")
	}
}

// TestRequestsOnly checks that an internal store's metrics record its etcd
// requests and decode errors and nothing else (etcd_lease_object_counts,
// without labels, always has its one series).
func TestRequestsOnly(t *testing.T) {
	reg, m := newRegistry(t)
	r := m.RequestsOnly(schema.GroupResource{Resource: "servicenodeportallocations"})
	r.EtcdRequest(OpGet, time.Now(), nil)
	r.EtcdEvent()
	r.EtcdBookmark()
	r.DecodeError()
	r.StorageList(10, 8, 2)
	r.ListLatency(true, time.Now())
	r.TrackObjects(func(context.Context) (int64, error) { return 3, nil })
	r.TrackSize(func(context.Context) (int64, error) { return 300, nil })
	if c := r.Cache(); c != nil {
		t.Errorf("Cache: got %v, want nil", c)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
	}
	sort.Strings(names)
	want := []string{"apiserver_storage_decode_errors_total", "etcd_lease_object_counts", "etcd_request_duration_seconds", "etcd_requests_total"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("families with series: got %q, want %q", names, want)
	}
}

// TestShowHidden checks the deprecated families served with
// --show-hidden-metrics-for-version: each follows its replacement, and
// none is there without the option.
func TestShowHidden(t *testing.T) {
	for _, show := range []bool{false, true} {
		reg := prometheus.NewRegistry()
		m, err := NewWithOptions(reg, Options{ShowHidden: show})
		if err != nil {
			t.Fatal(err)
		}
		r := m.Resource(schema.GroupResource{Group: "apps", Resource: "deployments"})
		r.TrackObjects(func(context.Context) (int64, error) { return 3, nil })
		r.EtcdBookmark()
		r.EtcdBookmark()
		r.Cache().List(10, 4)
		want := map[string][]string{
			"apiserver_storage_objects":                   {`resource="deployments.apps" 3`},
			"etcd_bookmark_counts":                        {`group="apps",resource="deployments" 2`},
			"apiserver_cache_list_total":                  {`group="apps",index="",resource="deployments" 1`},
			"apiserver_cache_list_fetched_objects_total":  {`group="apps",index="",resource="deployments" 10`},
			"apiserver_cache_list_returned_objects_total": {`group="apps",resource="deployments" 4`},
		}
		for family, series := range want {
			got := gather(t, reg, family)
			if !show {
				if len(got) != 0 {
					t.Errorf("%s without ShowHidden: got %q, want nothing", family, got)
				}
				continue
			}
			if strings.Join(got, ";") != strings.Join(series, ";") {
				t.Errorf("%s: got %q, want %q", family, got, series)
			}
		}
	}
}
