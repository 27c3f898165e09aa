package healthz

import (
	"net/http"
	"time"

	"k8s.io/utils/clock"
)

// DelayedHealthCheck wraps a boot-sequence check for /livez (health.md 28):
// until the time of this call plus delay it reports success without running
// check; from then on it runs check. A delay <= 0 returns check unchanged.
// The wrapper keeps check's name and, if it has one, its group.
//
// Upstream switches over strictly after the deadline; here the real check
// runs from the deadline itself, so a zero grace never hides a failure even
// with a clock that has not moved.
func DelayedHealthCheck(check HealthChecker, clk clock.PassiveClock, delay time.Duration) HealthChecker {
	if delay <= 0 {
		return check
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	d := delayedCheck{check: check, clock: clk, startAt: clk.Now().Add(delay)}
	if g, ok := check.(GroupedChecker); ok {
		return delayedGroupedCheck{delayedCheck: d, group: g.Group()}
	}
	return d
}

type delayedCheck struct {
	check   HealthChecker
	clock   clock.PassiveClock
	startAt time.Time
}

func (d delayedCheck) Name() string { return d.check.Name() }

func (d delayedCheck) Check(r *http.Request) error {
	if d.clock.Now().Before(d.startAt) {
		return nil
	}
	return d.check.Check(r)
}

type delayedGroupedCheck struct {
	delayedCheck
	group string
}

func (d delayedGroupedCheck) Group() string { return d.group }
