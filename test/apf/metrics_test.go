package apf

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/kapi-dev/kapi/kapitest"
)

// gauge is the value of name's series with labels want (false: none).
func gauge(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		if labelsMatch(m, want) {
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// The borrowing adjustment's statistics (upstream's
// NotePriorityLevelConfigurationAdjustment and SetFairFrac): each
// priority level's seat demand high watermark, average, standard
// deviation, smoothed demand and target, and the fair fraction, published
// at start and at every adjustment; the demand of a level's traffic shows
// in its statistics in the next adjustment.
func TestSeatDemandStatistics(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithOptions(func(o *kapitest.Options) { o.APFAdjustmentPeriod = 200 * time.Millisecond }))
	ids := newIdentities(t, srv)
	levels := []string{"catch-all", "exempt", "global-default", "leader-election", "node-high", "system", "workload-high", "workload-low"}
	fams := ids.metrics(t)
	for _, name := range []string{"apiserver_flowcontrol_demand_seats_high_watermark", "apiserver_flowcontrol_demand_seats_average",
		"apiserver_flowcontrol_demand_seats_stdev", "apiserver_flowcontrol_demand_seats_smoothed", "apiserver_flowcontrol_target_seats"} {
		for _, pl := range levels {
			if _, ok := gauge(fams, name, map[string]string{"priority_level": pl}); !ok {
				t.Errorf("%s{priority_level=%q}: missing", name, pl)
			}
		}
		if n := len(fams[name].GetMetric()); n != len(levels) {
			t.Errorf("%s: %d series, want %d", name, n, len(levels))
		}
	}
	// The default configuration on 600 seats: upstream's fair fraction
	// (the nominal limits' sum, 602, over the lower bounds' sum, 258).
	if f, ok := gauge(fams, "apiserver_flowcontrol_seat_fair_frac", nil); !ok || f < 2.3 || f > 2.4 {
		t.Errorf("seat_fair_frac %v (present %v), want about 2.33 on an idle server", f, ok)
	}
	gd := map[string]string{"priority_level": "global-default"}
	if v, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_smoothed", gd); v != 0 {
		t.Errorf("global-default smoothed demand %v before any traffic, want 0", v)
	}

	// Traffic on global-default (an authenticated user): 8 clients at a
	// time until an adjustment has seen it.
	alice := ids.as(t, "alice", "system:authenticated")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if code, _, _, err := alice.get(ctx, "/api/v1/namespaces/default/configmaps"); err == nil && code != http.StatusOK {
					t.Errorf("list: %d", code)
					return
				}
			}
		}()
	}
	eventually(t, 30*time.Second, "global-default's demand in its statistics", func() error {
		fams := ids.metrics(t)
		hwm, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_high_watermark", gd)
		avg, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_average", gd)
		sm, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_smoothed", gd)
		if hwm < 1 || avg <= 0 || sm <= 0 {
			return errorf("high watermark %v, average %v, smoothed %v", hwm, avg, sm)
		}
		if hwm > 8 || avg > hwm {
			return errorf("high watermark %v and average %v, with at most 8 requests at a time", hwm, avg)
		}
		return nil
	})
	cancel()
	wg.Wait()
	// Idle again: the high watermark falls to 0 within two periods; the
	// smoothed demand decays slowly (upstream's 0.977 per period).
	eventually(t, 30*time.Second, "global-default idle", func() error {
		fams := ids.metrics(t)
		hwm, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_high_watermark", gd)
		avg, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_average", gd)
		sm, _ := gauge(fams, "apiserver_flowcontrol_demand_seats_smoothed", gd)
		if hwm != 0 || avg != 0 || sm <= 0 {
			return errorf("high watermark %v, average %v, smoothed %v; want 0, 0, > 0", hwm, avg, sm)
		}
		return nil
	})
}
