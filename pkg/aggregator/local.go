package aggregator

import (
	"context"
	"time"

	"github.com/kapi-dev/kapi/pkg/aggregator/apiservice"
)

// runLocalAvailability keeps every local APIService Available with reason
// Local (the apiservice-status-local-available-controller): one created
// local is so already; one that became local, or whose status someone
// changed, is set so here.
func (a *Aggregator) runLocalAvailability(ctx context.Context, changed <-chan struct{}) {
	if !a.informer.waitSynced(ctx) {
		return
	}
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	for {
		failed := false
		for _, svc := range a.informer.list() {
			if !apiservice.IsLocal(svc) {
				continue
			}
			// Upstream sets the gauge on every sync, before it
			// compares the status.
			a.availability.synced(svc.Name, true)
			c := apiservice.LocalAvailableCondition(now())
			if sameCondition(svc, c) {
				continue
			}
			if err := a.setAvailable(ctx, svc.Name, c); err != nil && ctx.Err() == nil {
				a.logger.Warn("local apiservice availability", "apiservice", svc.Name, "err", err)
				failed = true
			}
		}
		if failed {
			retry.Reset(time.Second)
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-retry.C:
		}
	}
}
