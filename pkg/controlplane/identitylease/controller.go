package identitylease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// The lease controller's limits, as upstream's
// (k8s.io/component-helpers/apimachinery/lease/controller.go, v0.37.2).
const (
	// maxUpdateRetries updates are tried at once before waiting for the
	// next renewal.
	maxUpdateRetries = 5
	// maxBackoff bounds the wait between attempts to make the Lease.
	maxBackoff = 7 * time.Second
	// deleteTimeout bounds the deletions at start and at stop.
	deleteTimeout = 10 * time.Second
	// renewJitter is the renewal period's jitter factor.
	renewJitter = 0.04
)

// Config is what a Controller keeps.
type Config struct {
	// Leases is the client of the Leases of Namespace. Required.
	Leases coordinationclient.LeasesGetter
	// Name and Namespace are the Lease's. Required.
	Name, Namespace string
	// Holder is the holderIdentity of a Lease the controller creates.
	Holder string
	// DurationSeconds is the Lease's leaseDurationSeconds.
	DurationSeconds int32
	// RenewInterval is how often the Lease is renewed.
	RenewInterval time.Duration
	// Process, if set, is applied to the Lease before every create and
	// update; an error skips a create (retried at the next renewal), not
	// an update.
	Process func(*coordinationv1.Lease) error
	// Now is the clock of renewTime; nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// Controller creates and renews one Lease (upstream's lease controller):
// Run deletes a Lease of that name left from an earlier holder, then makes
// it and renews it every RenewInterval (a 4% jitter added) until its
// context ends or Stop is called; Stop deletes it.
//
// A renewal updates the Lease last written without reading it first; on a
// conflict it reads the Lease and renews that (keeping whoever holds it),
// and when it is gone it is created again.
type Controller struct {
	cfg    Config
	leases coordinationclient.LeaseInterface
	logger *slog.Logger

	// mu serializes syncs, the deletion at start and Stop's deletion.
	mu sync.Mutex
	// latest is the Lease the controller last created or updated.
	latest *coordinationv1.Lease

	// stop is closed by Stop: no sync starts after it, and a sync waiting
	// to retry returns.
	stop     chan struct{}
	stopOnce sync.Once
}

// New returns a controller of the Lease cfg names.
func New(cfg Config) *Controller {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Controller{
		cfg:    cfg,
		leases: cfg.Leases.Leases(cfg.Namespace),
		logger: cfg.Logger.With("controller", "identity-lease", "lease", cfg.Namespace+"/"+cfg.Name),
		stop:   make(chan struct{}),
	}
}

// Run deletes the Lease left by an earlier run (so that peers do not take
// a server that is gone for this one), then creates and renews it until ctx
// ends or Stop is called. It returns at once after Stop.
func (c *Controller) Run(ctx context.Context) {
	c.mu.Lock()
	if c.stopped() {
		c.mu.Unlock()
		return
	}
	c.logger.Info("deleting the old lease on startup")
	c.delete()
	c.mu.Unlock()

	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.stop:
			return
		case <-t.C:
		}
		c.sync(ctx)
		// The period counts from the end of a sync (JitterUntil, sliding).
		t.Reset(c.cfg.RenewInterval + time.Duration(rand.Float64()*renewJitter*float64(c.cfg.RenewInterval)))
	}
}

// Stop ends the renewals, waits for a sync in progress, and deletes the
// Lease. Only the first call deletes.
func (c *Controller) Stop() {
	first := false
	c.stopOnce.Do(func() {
		close(c.stop)
		first = true
	})
	if !first {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logger.Info("cleaning up the lease on exit")
	c.delete()
}

func (c *Controller) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// delete deletes the Lease (a missing one is fine); the caller holds mu.
func (c *Controller) delete() {
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	if err := c.leases.Delete(ctx, c.cfg.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		c.logger.Error("deleting the lease failed", "err", err)
	}
	c.latest = nil
}

// sync renews the Lease, or makes it.
func (c *Controller) sync(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped() {
		return
	}
	if c.latest != nil {
		// Nobody but this server writes the Lease (in general): updating
		// the version last written saves a read.
		err := c.retryUpdate(ctx, c.latest)
		if err == nil {
			return
		}
		c.logger.Info("renewing the last lease written failed; reading it", "err", err)
	}
	lease, created := c.backoffEnsure(ctx)
	c.latest = lease
	if !created && lease != nil {
		if err := c.retryUpdate(ctx, lease); err != nil {
			c.logger.Error("renewing the lease failed; retrying at the next renewal", "err", err, "interval", c.cfg.RenewInterval)
		}
	}
}

// backoffEnsure makes sure the Lease exists, retrying with a doubling wait
// (200 ms up to maxBackoff) until it does, ctx ends or Stop is called. It
// returns the Lease (nil if none) and whether it created it.
func (c *Controller) backoffEnsure(ctx context.Context) (*coordinationv1.Lease, bool) {
	sleep := 100 * time.Millisecond
	for {
		lease, created, err := c.ensure(ctx)
		if err == nil {
			return lease, created
		}
		sleep = min(2*sleep, maxBackoff)
		c.logger.Error("making sure the lease exists failed; retrying", "err", err, "wait", sleep)
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false
		case <-c.stop:
			t.Stop()
			return nil, false
		case <-t.C:
		}
	}
}

// ensure reads the Lease and creates it if it is missing. A Process error
// skips the create without an error (retried at the next renewal).
func (c *Controller) ensure(ctx context.Context) (*coordinationv1.Lease, bool, error) {
	lease, err := c.leases.Get(ctx, c.cfg.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		want, err := c.newLease(nil)
		if err != nil {
			return nil, false, nil
		}
		lease, err := c.leases.Create(ctx, want, metav1.CreateOptions{})
		if err != nil {
			return nil, false, err
		}
		return lease, true, nil
	case err != nil:
		return nil, false, err
	}
	return lease, false, nil
}

// retryUpdate renews base, trying maxUpdateRetries times; a conflict reads
// the Lease again first.
func (c *Controller) retryUpdate(ctx context.Context, base *coordinationv1.Lease) error {
	for range maxUpdateRetries {
		want, err := c.newLease(base)
		if err != nil {
			c.logger.Error("preparing the lease failed", "err", err)
			continue
		}
		lease, err := c.leases.Update(ctx, want, metav1.UpdateOptions{})
		if err == nil {
			c.latest = lease
			return nil
		}
		c.logger.Error("updating the lease failed", "err", err)
		if apierrors.IsConflict(err) {
			base, _ = c.backoffEnsure(ctx)
			if base == nil {
				// Stopped, or the Lease could not be read.
				return errors.New("the lease to update could not be read")
			}
		}
	}
	return fmt.Errorf("failed %d attempts to update lease", maxUpdateRetries)
}

// newLease is a Lease to create (base nil) or base renewed: the duration
// (which may have changed since it was created) and renewTime now, with
// Process applied.
func (c *Controller) newLease(base *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	var l *coordinationv1.Lease
	if base == nil {
		holder := c.cfg.Holder
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: c.cfg.Name, Namespace: c.cfg.Namespace},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
		}
	} else {
		l = base.DeepCopy()
	}
	d := c.cfg.DurationSeconds
	l.Spec.LeaseDurationSeconds = &d
	l.Spec.RenewTime = &metav1.MicroTime{Time: c.cfg.Now()}
	if c.cfg.Process != nil {
		return l, c.cfg.Process(l)
	}
	return l, nil
}
