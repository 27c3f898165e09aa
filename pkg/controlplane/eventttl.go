package controlplane

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// DefaultEventTTL is kube-apiserver's --event-ttl.
const DefaultEventTTL = time.Hour

// eventStore is what the collector reads and deletes events through.
type eventStore interface {
	rest.Lister
	rest.GracefulDeleter
}

// eventCollector deletes events not written for ttl. kube-apiserver
// stores each event under an etcd lease of --event-ttl, refreshed by
// every write; kapi's storage has no TTL, so a loop does the same: an
// event whose last write (the latest of its creation, lastTimestamp,
// eventTime and series' lastObservedTime) is older than ttl is deleted,
// on the condition that it has not changed since it was read.
type eventCollector struct {
	events eventStore
	ttl    time.Duration
	now    func() time.Time
	logger *slog.Logger
}

// run collects every period (a quarter of the TTL, at most a minute, at
// least a second) until ctx ends.
func (c *eventCollector) run(ctx context.Context) {
	period := min(c.ttl/4, time.Minute)
	period = max(period, time.Second)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if n, err := c.collect(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("collect expired events", "err", err)
		} else if n > 0 {
			c.logger.Debug("collected expired events", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// collect deletes the expired events and returns how many.
func (c *eventCollector) collect(ctx context.Context) (int, error) {
	obj, err := c.events.List(systemContext(ctx, ""), &metainternalversion.ListOptions{})
	if err != nil {
		return 0, err
	}
	list, ok := obj.(*corev1.EventList)
	if !ok {
		return 0, nil
	}
	cutoff := c.now().Add(-c.ttl)
	n := 0
	for i := range list.Items {
		ev := &list.Items[i]
		if !lastWrite(ev).Before(cutoff) {
			continue
		}
		rv := ev.ResourceVersion
		_, _, err := c.events.Delete(systemContext(ctx, ev.Namespace), ev.Name, rest.ValidateAllObjectFunc,
			&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &rv}})
		switch {
		case err == nil:
			n++
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			// Gone, or written meanwhile (its TTL starts again).
		default:
			return n, err
		}
	}
	return n, nil
}

// lastWrite approximates when ev was last written.
func lastWrite(ev *corev1.Event) time.Time {
	t := ev.CreationTimestamp.Time
	if ev.LastTimestamp.After(t) {
		t = ev.LastTimestamp.Time
	}
	if ev.EventTime.After(t) {
		t = ev.EventTime.Time
	}
	if ev.Series != nil && ev.Series.LastObservedTime.After(t) {
		t = ev.Series.LastObservedTime.Time
	}
	return t
}
