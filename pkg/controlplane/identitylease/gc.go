package identitylease

import (
	"context"
	"log/slog"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// GC deletes the expired identity Leases of a namespace: those matching
// Selector whose renewTime plus leaseDurationSeconds is past, or that lack
// either (upstream's apiserverleasegc controller, k8s.io/kubernetes
// pkg/controlplane/controller/apiserverleasegc, v1.37.2). A Lease found
// expired is read again and deleted only if it still is, so that a server
// renewing it meanwhile keeps it.
//
// Upstream keeps an informer of those Leases and looks at its cache every
// period; GC lists them every period instead (served from the watch cache,
// as an informer's first list is), which holds no watch between two
// collections that are an hour apart.
type GC struct {
	// Leases is the client of the Leases. Required.
	Leases coordinationclient.LeasesGetter
	// Namespace and Selector (a label selector) choose the Leases.
	Namespace, Selector string
	// Period is how often the Leases are collected, the first time at
	// once.
	Period time.Duration
	// Now is the clock expiry is judged by; nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Run collects at once and then every Period until ctx ends.
func (g *GC) Run(ctx context.Context) {
	logger := g.logger()
	logger.Info("starting the apiserver lease garbage collector")
	defer logger.Info("shutting down the apiserver lease garbage collector")
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		g.Collect(ctx)
		t.Reset(g.Period)
	}
}

func (g *GC) logger() *slog.Logger {
	l := g.Logger
	if l == nil {
		l = slog.Default()
	}
	return l.With("controller", "apiserver-lease-gc")
}

// Collect deletes the expired Leases once.
func (g *GC) Collect(ctx context.Context) {
	logger := g.logger()
	leases := g.Leases.Leases(g.Namespace)
	list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: g.Selector, ResourceVersion: "0"})
	if err != nil {
		if ctx.Err() == nil {
			logger.Error("listing the apiserver leases failed", "err", err)
		}
		return
	}
	for i := range list.Items {
		if !g.expired(&list.Items[i]) {
			continue
		}
		name := list.Items[i].Name
		cur, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// Another server's collector was first: legitimate.
			logger.Debug("the apiserver lease is gone already", "lease", name)
			continue
		}
		if err != nil {
			logger.Error("reading the apiserver lease failed", "lease", name, "err", err)
			continue
		}
		if !g.expired(cur) {
			continue
		}
		if err := leases.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			if apierrors.IsNotFound(err) {
				logger.Debug("the apiserver lease is gone already", "lease", name)
			} else {
				logger.Error("deleting the apiserver lease failed", "lease", name, "err", err)
			}
			continue
		}
		logger.Info("deleted an expired apiserver lease", "lease", g.Namespace+"/"+name)
	}
}

// expired is upstream's isLeaseExpired: a Lease without renewTime or
// duration is invalid, hence collected.
func (g *GC) expired(l *coordinationv1.Lease) bool {
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	s := l.Spec
	return s.RenewTime == nil || s.LeaseDurationSeconds == nil ||
		s.RenewTime.Add(time.Duration(*s.LeaseDurationSeconds)*time.Second).Before(now())
}
