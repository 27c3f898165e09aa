package serviceaccounttoken

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// Issuer signs the token of a legacy Secret.
type Issuer interface {
	IssueLegacy(sa *corev1.ServiceAccount, secret *corev1.Secret) (string, error)
}

// Controller keeps legacy service-account token Secrets filled in, as
// upstream's TokensController (pkg/controller/serviceaccount/tokens_controller.go,
// v1.37) does: a Secret of type kubernetes.io/service-account-token naming
// an existing service account gets token, namespace and ca.crt (and the
// service account's UID annotation); one whose service account is gone (or
// was replaced: another UID) is deleted, and so are a deleted service
// account's token Secrets.
type Controller struct {
	client kubernetes.Interface
	issuer Issuer
	rootCA []byte
	logger *slog.Logger

	accounts       cache.SharedIndexInformer
	accountsLister corelisters.ServiceAccountLister
	secrets        cache.SharedIndexInformer
	secretsLister  corelisters.SecretLister
	synced         []cache.DoneChecker

	queue     workqueue.TypedRateLimitingInterface[string]
	hasSynced atomic.Bool
}

// Keys of the queue: "sa/<ns>/<name>" and "secret/<ns>/<name>".
const (
	saPrefix     = "sa/"
	secretPrefix = "secret/"
)

// New returns a controller; Run starts its informers. rootCA (may be
// empty) is written as ca.crt.
func New(client kubernetes.Interface, issuer Issuer, rootCA []byte, logger *slog.Logger) (*Controller, error) {
	if logger == nil {
		logger = slog.Default()
	}
	c := &Controller{
		client: client,
		issuer: issuer,
		rootCA: rootCA,
		logger: logger,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "serviceaccount_tokens"}),
	}
	indexers := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	c.accounts = coreinformers.NewServiceAccountInformer(client, metav1.NamespaceAll, 0, indexers)
	c.accountsLister = corelisters.NewServiceAccountLister(c.accounts.GetIndexer())
	c.secrets = coreinformers.NewFilteredSecretInformer(client, metav1.NamespaceAll, 0, indexers, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("type", string(corev1.SecretTypeServiceAccountToken)).String()
	})
	c.secretsLister = corelisters.NewSecretLister(c.secrets.GetIndexer())
	saHandler, err := c.accounts.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(saPrefix, obj) },
		UpdateFunc: func(_, obj any) { c.enqueue(saPrefix, obj) },
		DeleteFunc: func(obj any) { c.enqueue(saPrefix, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("serviceaccount informer: %w", err)
	}
	secretHandler, err := c.secrets.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(secretPrefix, obj) },
		UpdateFunc: func(_, obj any) { c.enqueue(secretPrefix, obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("secret informer: %w", err)
	}
	c.synced = []cache.DoneChecker{saHandler.HasSyncedChecker(), secretHandler.HasSyncedChecker()}
	return c, nil
}

func (c *Controller) enqueue(prefix string, obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	c.queue.Add(prefix + m.GetNamespace() + "/" + m.GetName())
}

// HasSynced reports whether the informers are filled and the workers run.
func (c *Controller) HasSynced() bool { return c.hasSynced.Load() }

// Run works until ctx ends, then returns once every goroutine it started
// has.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer c.queue.ShutDown()
	wg.Go(func() { c.accounts.RunWithContext(ctx) })
	wg.Go(func() { c.secrets.RunWithContext(ctx) })
	if !cache.WaitFor(ctx, "", c.synced...) { // notified, not polled
		return
	}
	c.logger.Info("starting controller")
	c.hasSynced.Store(true)
	wg.Go(func() {
		for c.processNext(ctx) {
		}
	})
	<-ctx.Done()
	c.logger.Info("shutting down controller")
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	var err error
	switch {
	case strings.HasPrefix(key, saPrefix):
		err = c.syncServiceAccount(ctx, strings.TrimPrefix(key, saPrefix))
	case strings.HasPrefix(key, secretPrefix):
		err = c.syncSecret(ctx, strings.TrimPrefix(key, secretPrefix))
	}
	if err != nil {
		if ctx.Err() == nil {
			c.logger.Warn("syncing service account tokens", "key", key, "err", err)
		}
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// syncServiceAccount deletes the token Secrets of a service account that
// is gone; for one that exists, its token Secrets are (re)examined.
func (c *Controller) syncServiceAccount(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	sa, err := c.accountsLister.ServiceAccounts(ns).Get(name)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	secrets, err := c.secretsLister.Secrets(ns).List(labels.Everything())
	if err != nil {
		return err
	}
	for _, s := range secrets {
		if s.Annotations[corev1.ServiceAccountNameKey] != name {
			continue
		}
		if sa == nil {
			if err := c.deleteSecret(ctx, s); err != nil {
				return err
			}
			continue
		}
		c.queue.Add(secretPrefix + ns + "/" + s.Name)
	}
	return nil
}

// syncSecret fills in or deletes one token Secret.
func (c *Controller) syncSecret(ctx context.Context, key string) error {
	ns, name, _ := strings.Cut(key, "/")
	secret, err := c.secretsLister.Secrets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if secret.Type != corev1.SecretTypeServiceAccountToken || secret.DeletionTimestamp != nil {
		return nil
	}
	saName := secret.Annotations[corev1.ServiceAccountNameKey]
	saUID := secret.Annotations[corev1.ServiceAccountUIDKey]
	sa, err := c.serviceAccount(ctx, ns, saName, saUID)
	if err != nil {
		return err
	}
	if sa == nil {
		return c.deleteSecret(ctx, secret)
	}
	return c.fillIn(ctx, sa, secret)
}

// serviceAccount returns the named service account if it exists with uid
// (when uid is set), asking the server when the cache does not have it
// (it may be newer than the cache), nil when it does not.
func (c *Controller) serviceAccount(ctx context.Context, ns, name, uid string) (*corev1.ServiceAccount, error) {
	if name == "" {
		return nil, nil
	}
	matches := func(sa *corev1.ServiceAccount) bool { return uid == "" || string(sa.UID) == uid }
	sa, err := c.accountsLister.ServiceAccounts(ns).Get(name)
	if err == nil && matches(sa) {
		return sa, nil
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	sa, err = c.client.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !matches(sa) {
		return nil, nil
	}
	return sa, nil
}

// fillIn writes what a token Secret lacks: ca.crt, namespace, token and
// the service account's UID annotation.
func (c *Controller) fillIn(ctx context.Context, sa *corev1.ServiceAccount, secret *corev1.Secret) error {
	needCA := len(c.rootCA) > 0 && !bytes.Equal(secret.Data[corev1.ServiceAccountRootCAKey], c.rootCA)
	needNamespace := !bytes.Equal(secret.Data[corev1.ServiceAccountNamespaceKey], []byte(secret.Namespace))
	needToken := len(secret.Data[corev1.ServiceAccountTokenKey]) == 0
	needUID := secret.Annotations[corev1.ServiceAccountUIDKey] != string(sa.UID)
	if !needCA && !needNamespace && !needToken && !needUID {
		return nil
	}
	s := secret.DeepCopy()
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	if needCA {
		s.Data[corev1.ServiceAccountRootCAKey] = c.rootCA
	}
	if needNamespace {
		s.Data[corev1.ServiceAccountNamespaceKey] = []byte(s.Namespace)
	}
	s.Annotations[corev1.ServiceAccountUIDKey] = string(sa.UID)
	if needToken {
		token, err := c.issuer.IssueLegacy(sa, s)
		if err != nil {
			return fmt.Errorf("generate token for %s/%s: %w", s.Namespace, s.Name, err)
		}
		s.Data[corev1.ServiceAccountTokenKey] = []byte(token)
	}
	_, err := c.client.CoreV1().Secrets(s.Namespace).Update(ctx, s, metav1.UpdateOptions{})
	switch {
	case err == nil:
		c.logger.Debug("filled in service account token secret", "secret", s.Namespace+"/"+s.Name)
		return nil
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		// The informer brings the newer version; it is examined then.
		return nil
	default:
		return fmt.Errorf("update secret %s/%s: %w", s.Namespace, s.Name, err)
	}
}

func (c *Controller) deleteSecret(ctx context.Context, s *corev1.Secret) error {
	uid := s.UID
	err := c.client.CoreV1().Secrets(s.Namespace).Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err == nil {
		c.logger.Debug("deleted the token secret of a missing service account", "secret", s.Namespace+"/"+s.Name)
	}
	if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return fmt.Errorf("delete secret %s/%s: %w", s.Namespace, s.Name, err)
}
