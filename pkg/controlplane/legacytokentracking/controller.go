// Package legacytokentracking keeps the ConfigMap
// kube-system/kube-apiserver-legacy-service-account-token-tracking, whose
// "since" is the day (UTC) from which the API servers label the Secrets of
// legacy service-account tokens with the day they were last used
// (kubernetes.io/legacy-token-last-used, see pkg/auth/serviceaccount).
// kube-controller-manager's legacy-service-account-token-cleaner reads it
// to know how long the labels have been kept. Upstream:
// k8s.io/kubernetes pkg/controlplane/controller/legacytokentracking,
// v1.37.2.
package legacytokentracking

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// The ConfigMap, as upstream names it.
const (
	ConfigMapName = "kube-apiserver-legacy-service-account-token-tracking"
	// DataKey holds the day tracking began, in DateFormat.
	DataKey = "since"
	// DateFormat is the layout of the day.
	DateFormat = "2006-01-02"
)

// The controller's pacing, as upstream's.
const (
	// DefaultCreateInterval: the ConfigMap is created at most once per
	// interval, so that servers of a cluster that disagree about tracking
	// do not fight over it.
	DefaultCreateInterval = 30 * time.Minute
	// resync is the informer's resync period.
	resync = 12 * time.Hour
	// Failed syncs are retried after a wait doubling from minRetry up to
	// maxRetry (client-go's default per-item controller backoff).
	minRetry = 5 * time.Millisecond
	maxRetry = 1000 * time.Second
)

// Controller creates the ConfigMap with today's date (UTC) when it is
// missing, and puts today's date in place of a "since" that does not parse.
// It watches that one ConfigMap: a deletion is repaired too, within the
// creation limit.
type Controller struct {
	// Client reaches the ConfigMaps. Required.
	Client kubernetes.Interface
	// CreateInterval is the least time between two creations; 0:
	// DefaultCreateInterval.
	CreateInterval time.Duration
	// Now is the clock of the date; nil: time.Now.
	Now    func() time.Time
	Logger *slog.Logger

	// lastCreate is when the ConfigMap was last created (or found
	// created by another server): the creation limit's reservation.
	lastCreate time.Time
}

// Run watches the ConfigMap and syncs it until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	logger := c.logger()
	logger.Info("starting legacy_token_tracking_controller")
	defer logger.Info("shutting down legacy_token_tracking_controller")
	informer := coreinformers.NewFilteredConfigMapInformer(c.Client, metav1.NamespaceSystem, resync, cache.Indexers{},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ConfigMapName).String()
		})
	kick := make(chan struct{}, 1)
	notify := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}); err != nil {
		logger.Error("watching the configmap failed", "err", err)
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		informer.RunWithContext(ctx)
	}()
	defer func() { <-done }()
	// Waited for on its channel: WaitForCacheSync polls every 100 ms,
	// which a server's first sync (and kapitest's Start, which waits for
	// the ConfigMap) would pay for.
	select {
	case <-informer.HasSyncedChecker().Done():
	case <-ctx.Done():
		return
	}
	notify()

	store := informer.GetStore()
	retry := time.NewTimer(0)
	if !retry.Stop() {
		<-retry.C
	}
	defer retry.Stop()
	backoff := minRetry
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		case <-retry.C:
		}
		after, err := c.sync(ctx, store)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil:
			logger.Error("syncing the configmap failed", "configmap", metav1.NamespaceSystem+"/"+ConfigMapName, "err", err)
			after = backoff
			backoff = min(2*backoff, maxRetry)
		default:
			backoff = minRetry
		}
		if after > 0 {
			retry.Stop()
			select {
			case <-retry.C:
			default:
			}
			retry.Reset(after)
		}
	}
}

func (c *Controller) logger() *slog.Logger {
	l := c.Logger
	if l == nil {
		l = slog.Default()
	}
	return l.With("controller", "legacy_token_tracking_controller")
}

// sync makes the ConfigMap as it should be. A positive duration asks for
// another sync after it (a creation waiting for the limit).
func (c *Controller) sync(ctx context.Context, store cache.Store) (time.Duration, error) {
	obj, exists, err := store.GetByKey(metav1.NamespaceSystem + "/" + ConfigMapName)
	if err != nil {
		return 0, err
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	today := now.UTC().Format(DateFormat)
	cms := c.Client.CoreV1().ConfigMaps(metav1.NamespaceSystem)
	if !exists {
		every := c.CreateInterval
		if every <= 0 {
			every = DefaultCreateInterval
		}
		if !c.lastCreate.IsZero() {
			if wait := c.lastCreate.Add(every).Sub(now); wait > 0 {
				return wait, nil
			}
		}
		_, err := cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: ConfigMapName},
			Data:       map[string]string{DataKey: today},
		}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			// A failed attempt does not count against the limit.
			return 0, err
		}
		c.lastCreate = now
		return 0, nil
	}
	cm, ok := obj.(*corev1.ConfigMap)
	if !ok {
		return 0, nil
	}
	if _, err := time.Parse(DateFormat, cm.Data[DataKey]); err == nil {
		return 0, nil
	}
	cm = cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[DataKey] = today
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return 0, err
	}
	return 0, nil
}
