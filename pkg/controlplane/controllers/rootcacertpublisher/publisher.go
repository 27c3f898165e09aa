package rootcacertpublisher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/internal/nsloop"
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

	namespaces       corelisters.NamespaceLister
	namespacesSynced cache.DoneChecker
	// configMaps watches only the ConfigMaps named kube-root-ca.crt.
	configMaps       cache.SharedIndexInformer
	configMapsLister corelisters.ConfigMapLister
	configMapsSynced cache.DoneChecker

	loop *nsloop.Loop
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
	p := &Publisher{client: client, rootCA: string(rootCA)}
	p.loop = nsloop.New("root_ca_cert_publisher", "publishing the root CA", logger, p.sync)
	p.configMaps = coreinformers.NewFilteredConfigMapInformer(client, metav1.NamespaceAll, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc},
		func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ConfigMapName).String()
		})
	p.configMapsLister = corelisters.NewConfigMapLister(p.configMaps.GetIndexer())
	configMapChanged := nsloop.ObjectChanged[*corev1.ConfigMap](p.loop, ConfigMapName)
	cmHandler, err := p.configMaps.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { configMapChanged(obj) },
		DeleteFunc: configMapChanged,
	})
	if err != nil {
		return nil, fmt.Errorf("configmap informer: %w", err)
	}
	p.configMapsSynced = cmHandler.HasSyncedChecker()
	nsHandler, err := nsInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: p.loop.NamespaceChanged,
		UpdateFunc: func(_, obj any) {
			// As upstream: updates only matter for active namespaces.
			if ns, ok := obj.(*corev1.Namespace); ok && ns.Status.Phase == corev1.NamespaceActive {
				p.loop.NamespaceChanged(obj)
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

// HasSynced reports whether both informers are filled and the worker runs.
func (p *Publisher) HasSynced() bool { return p.loop.HasSynced() }

// Synced is closed when HasSynced becomes true.
func (p *Publisher) Synced() <-chan struct{} { return p.loop.Synced() }

// Run works until ctx ends, then returns once every goroutine it started
// has.
func (p *Publisher) Run(ctx context.Context) {
	p.loop.Run(ctx, p.configMaps, p.namespacesSynced, p.configMapsSynced)
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
