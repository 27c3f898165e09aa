package aggregator

import (
	"fmt"
	"net/http"
	"sort"

	"github.com/kapi-dev/kapi/pkg/server/healthz"
)

// AutoregisterCompletion is the boot-sequence check
// autoregister-completion: it fails with "missing APIService: [...]"
// until every APIService auto-registered for the group-versions served
// when Install ran has been seen Available once; then it passes for good.
// Add it to /healthz, /livez and /readyz (upstream adds it as a
// boot-sequence check: with the livez grace period).
func (a *Aggregator) AutoregisterCompletion() healthz.HealthChecker {
	return healthz.NamedCheck(AutoregisterCompletionCheck, func(*http.Request) error {
		a.pendingMu.Lock()
		defer a.pendingMu.Unlock()
		if len(a.pending) == 0 {
			return nil
		}
		names := make([]string, 0, len(a.pending))
		for n := range a.pending {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("missing APIService: %v", names)
	})
}
