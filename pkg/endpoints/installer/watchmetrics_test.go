package installer

import (
	"encoding/json"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/server/metrics"
)

// TestWatchEventMetrics checks that every event a watch writes is counted
// in apiserver_watch_events_total and its size observed in
// apiserver_watch_events_sizes, labelled with the kind served.
func TestWatchEventMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServerWithMetrics(t, m)
	resp, stop := openWatch(t, ts, false, "/api/v1/namespaces/ns1/configmaps?watch=true", "")
	defer stop()
	createCM(t, ts, "a")
	createCM(t, ts, "b")
	dec := json.NewDecoder(resp.Body)
	want := 0
	for range 2 {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		want += len(raw) + 1 // the encoder ends each event with a newline
	}
	var count uint64
	var sum float64
	waitFor(t, "two watch events counted", func() bool {
		count, sum = watchEventSeries(t, reg)
		return count == 2
	})
	if sum != float64(want) {
		t.Errorf("got event sizes summing to %g, want %d (the bytes received)", sum, want)
	}
}

// watchEventSeries returns the count of the ConfigMap series of
// apiserver_watch_events_total and the sum of apiserver_watch_events_sizes,
// checking their labels.
func watchEventSeries(t *testing.T, reg *prometheus.Registry) (uint64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var count uint64
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != "apiserver_watch_events_total" && mf.GetName() != "apiserver_watch_events_sizes" {
			continue
		}
		for _, s := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if len(labels) != 3 || labels["group"] != "" || labels["version"] != "v1" || labels["kind"] != "ConfigMap" {
				t.Fatalf("%s: got labels %v, want group=\"\" version=v1 kind=ConfigMap", mf.GetName(), labels)
			}
			switch mf.GetName() {
			case "apiserver_watch_events_total":
				count = uint64(s.GetCounter().GetValue())
			case "apiserver_watch_events_sizes":
				sum = s.GetHistogram().GetSampleSum()
			}
		}
	}
	return count, sum
}
