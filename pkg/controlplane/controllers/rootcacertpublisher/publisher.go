package rootcacertpublisher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// What is published, as upstream
// (pkg/controller/certificates/rootcacertpublisher/publisher.go, v1.37).
const (
	// ConfigMapName is the ConfigMap every namespace gets.
	ConfigMapName = "kube-root-ca.crt"
	// DataKey holds the CA bundle.
	DataKey = "ca.crt"
	// DescriptionAnnotation and Description describe the ConfigMap.
	DescriptionAnnotation = "kubernetes.io/description"
	Description           = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
		"No other usage is guaranteed across distributions of Kubernetes clusters."
)

// Publisher keeps the "kube-root-ca.crt" ConfigMap in every active
// namespace.
type Publisher struct {
	client kubernetes.Interface
	rootCA string
	logger *slog.Logger

	namespaces       corelisters.NamespaceLister
	namespacesSynced cache.DoneChecker
	// configMaps watches only the ConfigMaps named kube-root-ca.crt.
	configMaps       cache.SharedIndexInformer
	configMapsLister corelisters.ConfigMapLister
	configMapsSynced cache.DoneChecker

	queue  workqueue.TypedRateLimitingInterface[string]
	synced atomic.Bool
	// syncedCh is closed when synced becomes true.
	syncedCh chan struct{}
}

// New returns a publisher of rootCA (PEM; it must not be empty) working
// from the shared namespace informer nsInformer (the caller starts it) and
// a ConfigMap informer of its own, restricted to the name kube-root-ca.crt
// (Run starts it).
func New(client kubernetes.Interface, nsInformer coreinformers.NamespaceInformer, rootCA []byte, logger *slog.Logger) (*Publisher, error) {
	if len(rootCA) == 0 {
		return nil, errors.New("no root CA to publish")
	}
	if logger == nil {
		logger = slog.Default()
	}
	p := &Publisher{
		client:   client,
		rootCA:   string(rootCA),
		logger:   logger,
		syncedCh: make(chan struct{}),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "root_ca_cert_publisher"}),
	}
	p.configMaps = coreinformers.NewFilteredConfigMapInformer(client, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ConfigMapName).String()
		})
	p.configMapsLister = corelisters.NewConfigMapLister(p.configMaps.GetIndexer())
	cmHandler, err := p.configMaps.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { p.configMapChanged(obj) },
		DeleteFunc: p.configMapChanged,
	})
	if err != nil {
		return nil, fmt.Errorf("configmap informer: %w", err)
	}
	p.configMapsSynced = cmHandler.HasSyncedChecker()
	nsHandler, err := nsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: p.namespaceChanged,
		UpdateFunc: func(_, obj any) {
			// As upstream: updates only matter for active namespaces.
			if ns, ok := obj.(*corev1.Namespace); ok && ns.Status.Phase == corev1.NamespaceActive {
				p.namespaceChanged(obj)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("namespace informer: %w", err)
	}
	p.namespaces = nsInformer.Lister()
	p.namespacesSynced = nsHandler.HasSyncedChecker()
	return p, nil
}

// HasSynced reports whether both informers are filled and the workers run.
func (p *Publisher) HasSynced() bool { return p.synced.Load() }

// Synced is closed when HasSynced becomes true.
func (p *Publisher) Synced() <-chan struct{} { return p.syncedCh }

// Run works until ctx ends, then returns once every goroutine it started
// has.
func (p *Publisher) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer p.queue.ShutDown()
	wg.Go(func() { p.configMaps.RunWithContext(ctx) })
	// Notified, not polled (cache.WaitForCacheSync polls every 100 ms,
	// which the server's readiness would wait on).
	if !cache.WaitFor(ctx, "", p.namespacesSynced, p.configMapsSynced) {
		return
	}
	p.logger.Info("starting controller")
	p.synced.Store(true)
	close(p.syncedCh)
	wg.Go(func() {
		for p.processNext(ctx) {
		}
	})
	<-ctx.Done()
	p.logger.Info("shutting down controller")
}

func (p *Publisher) namespaceChanged(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		p.queue.Add(ns.Name)
	}
}

func (p *Publisher) configMapChanged(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if cm, ok := obj.(*corev1.ConfigMap); ok && cm.Name == ConfigMapName {
		p.queue.Add(cm.Namespace)
	}
}

func (p *Publisher) processNext(ctx context.Context) bool {
	key, quit := p.queue.Get()
	if quit {
		return false
	}
	defer p.queue.Done(key)
	if err := p.sync(ctx, key); err != nil {
		if ctx.Err() == nil {
			p.logger.Warn("publishing the root CA", "namespace", key, "err", err)
		}
		p.queue.AddRateLimited(key)
		return true
	}
	p.queue.Forget(key)
	return true
}

// sync creates the ConfigMap in an active namespace that lacks it, and
// puts its data and description back when they changed.
func (p *Publisher) sync(ctx context.Context, namespace string) error {
	ns, err := p.namespaces.Get(namespace)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	data := map[string]string{DataKey: p.rootCA}
	cm, err := p.configMapsLister.ConfigMaps(namespace).Get(ConfigMapName)
	switch {
	case apierrors.IsNotFound(err):
		if ns.Status.Phase != corev1.NamespaceActive {
			return nil
		}
		_, err := p.client.CoreV1().ConfigMaps(namespace).Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name:        ConfigMapName,
				Namespace:   namespace,
				Annotations: map[string]string{DescriptionAnnotation: Description},
			},
			Data: data,
		}, metav1.CreateOptions{})
		// A namespace deleted or terminating meanwhile is not an error;
		// an object created meanwhile is checked on its event.
		if err == nil || apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err) || apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return nil
		}
		return fmt.Errorf("create configmap %s/%s: %w", namespace, ConfigMapName, err)
	case err != nil:
		return err
	}
	if maps.Equal(cm.Data, data) && cm.Annotations[DescriptionAnnotation] != "" {
		return nil
	}
	cm = cm.DeepCopy()
	cm.Data = data
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.Annotations[DescriptionAnnotation] = Description
	if _, err := p.client.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("update configmap %s/%s: %w", namespace, ConfigMapName, err)
	}
	return nil
}
