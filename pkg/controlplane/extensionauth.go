package controlplane

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/server"
)

// The cluster authentication info: kube-apiserver publishes in
// kube-system/extension-apiserver-authentication how extension API servers
// should authenticate it (client-ca-file) and the front proxy in front of
// them (requestheader-*). Extension servers built on k8s.io/apiserver read
// it at start and watch it.
const (
	clusterAuthHook          = "start-cluster-authentication-info-controller"
	clusterAuthConfigMapName = "extension-apiserver-authentication"

	keyClientCA      = "client-ca-file"
	keyRHClientCA    = "requestheader-client-ca-file"
	keyRHAllowed     = "requestheader-allowed-names"
	keyRHUsername    = "requestheader-username-headers"
	keyRHUID         = "requestheader-uid-headers"
	keyRHGroup       = "requestheader-group-headers"
	keyRHExtraPrefix = "requestheader-extra-headers-prefix"
)

// rhListKeys are the requestheader keys holding JSON lists of strings.
var rhListKeys = []string{keyRHUsername, keyRHUID, keyRHGroup, keyRHExtraPrefix, keyRHAllowed}

// DefaultClusterAuthenticationInterval is how often the cluster
// authentication info is reconciled (kube's controller re-checks every
// minute).
const DefaultClusterAuthenticationInterval = time.Minute

// authInfo is the parsed content of the configmap.
type authInfo struct {
	clientCA []*x509.Certificate
	rhCA     []*x509.Certificate
	lists    map[string][]string // by key, of rhListKeys
}

// parseAuthInfo reads configmap data. strict fails on values that do not
// parse; otherwise they are dropped (and replaced by ours), so that a
// damaged configmap heals instead of stopping the controller.
func parseAuthInfo(data map[string]string, strict bool) (authInfo, error) {
	info := authInfo{lists: map[string][]string{}}
	var errs []error
	var err error
	if info.clientCA, err = parseCerts(data[keyClientCA]); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", keyClientCA, err))
	}
	if info.rhCA, err = parseCerts(data[keyRHClientCA]); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", keyRHClientCA, err))
	}
	for _, k := range rhListKeys {
		v := data[k]
		if v == "" {
			continue
		}
		var list []string
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
			continue
		}
		info.lists[k] = list
	}
	if strict {
		return info, errors.Join(errs...)
	}
	return info, nil
}

func parseCerts(bundle string) ([]*x509.Certificate, error) {
	rest := []byte(bundle)
	var certs []*x509.Certificate
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		certs = append(certs, c)
	}
	if len(bytes.TrimSpace(rest)) > 0 && len(certs) == 0 {
		return nil, errors.New("no PEM certificates")
	}
	return certs, nil
}

// combine is kube's combinedClusterAuthenticationInfo: the union of both
// (several API servers share the configmap), lists in first-seen order,
// certificates deduplicated and those expired more than five minutes ago
// dropped.
func combine(existing, required authInfo, now time.Time) authInfo {
	out := authInfo{
		clientCA: combineCerts(existing.clientCA, required.clientCA, now),
		rhCA:     combineCerts(existing.rhCA, required.rhCA, now),
		lists:    map[string][]string{},
	}
	for _, k := range rhListKeys {
		list := []string{}
		for _, v := range append(slices.Clone(existing.lists[k]), required.lists[k]...) {
			if !slices.Contains(list, v) {
				list = append(list, v)
			}
		}
		out.lists[k] = list
	}
	return out
}

func combineCerts(a, b []*x509.Certificate, now time.Time) []*x509.Certificate {
	cutoff := now.Add(-5 * time.Minute)
	var out []*x509.Certificate
	for _, c := range append(slices.Clone(a), b...) {
		if !c.NotAfter.After(cutoff) {
			continue
		}
		if slices.ContainsFunc(out, func(o *x509.Certificate) bool { return bytes.Equal(o.Raw, c.Raw) }) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// data encodes info as kube does: client-ca-file when there is a client
// CA; the requestheader keys only when there is a requestheader CA (the
// headers mean nothing without it), lists as JSON arrays.
func (info authInfo) data() map[string]string {
	out := map[string]string{}
	if len(info.clientCA) > 0 {
		out[keyClientCA] = encodeCerts(info.clientCA)
	}
	if len(info.rhCA) == 0 {
		return out
	}
	out[keyRHClientCA] = encodeCerts(info.rhCA)
	for _, k := range rhListKeys {
		list := info.lists[k]
		if list == nil {
			list = []string{}
		}
		b, _ := json.Marshal(list) // a []string always encodes
		out[k] = string(b)
	}
	return out
}

func encodeCerts(certs []*x509.Certificate) string {
	var b bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}) // writes to memory
	}
	return b.String()
}

// clusterAuthInfo keeps kube-system/extension-apiserver-authentication
// holding the required data (merged with what other servers put there).
type clusterAuthInfo struct {
	configmaps interface {
		rest.Getter
		rest.Creater
		rest.Updater
	}
	namespaces rest.Getter
	required   authInfo
	interval   time.Duration
	logger     *slog.Logger
	now        func() time.Time
}

// waitForNamespace polls until kube-system exists (the bootstrap-namespaces
// hook creates it), or ctx ends.
func (c *clusterAuthInfo) waitForNamespace(ctx context.Context) error {
	delay := 50 * time.Millisecond
	for {
		_, err := c.namespaces.Get(systemContext(ctx, ""), metav1.NamespaceSystem, &metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) {
			c.logger.Warn("reading the kube-system namespace failed, retrying", "err", err)
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, time.Second)
	}
}

// sync creates or updates the configmap so that it holds the union of its
// data and the required data. It writes only when something changes.
func (c *clusterAuthInfo) sync(ctx context.Context) error {
	if err := c.waitForNamespace(ctx); err != nil {
		return err
	}
	sctx := systemContext(ctx, metav1.NamespaceSystem)
	obj, err := c.configmaps.Get(sctx, clusterAuthConfigMapName, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: clusterAuthConfigMapName, Namespace: metav1.NamespaceSystem},
			Data:       c.merged(nil),
		}
		_, err = c.configmaps.Create(sctx, cm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err == nil {
			c.logger.Info("created the cluster authentication info", "configmap", metav1.NamespaceSystem+"/"+clusterAuthConfigMapName)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create configmap %s: %w", clusterAuthConfigMapName, err)
		}
	} else if err != nil {
		return fmt.Errorf("get configmap %s: %w", clusterAuthConfigMapName, err)
	} else if cur := obj.(*corev1.ConfigMap); maps.Equal(cur.Data, c.merged(cur.Data)) {
		return nil
	}
	if _, _, err := c.configmaps.Update(sctx, clusterAuthConfigMapName, mergeInto{c}, rest.ValidateAllObjectFunc,
		rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update configmap %s: %w", clusterAuthConfigMapName, err)
	}
	c.logger.Info("updated the cluster authentication info", "configmap", metav1.NamespaceSystem+"/"+clusterAuthConfigMapName)
	return nil
}

// merged is the data the configmap should hold given its current data.
func (c *clusterAuthInfo) merged(cur map[string]string) map[string]string {
	existing, _ := parseAuthInfo(cur, false) // never fails when not strict
	return combine(existing, c.required, c.now()).data()
}

// mergeInto computes the update from the object current at write time, so
// a concurrent writer's data is kept.
type mergeInto struct{ c *clusterAuthInfo }

func (mergeInto) Preconditions() *metav1.Preconditions { return nil }

func (m mergeInto) UpdatedObject(_ context.Context, old runtime.Object) (runtime.Object, error) {
	cur, ok := old.(*corev1.ConfigMap)
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), clusterAuthConfigMapName)
	}
	upd := cur.DeepCopy()
	upd.Data = m.c.merged(cur.Data)
	return upd, nil
}

// run syncs until the first success (retrying with backoff), then starts a
// goroutine that syncs every interval until ctx ends; done is closed when
// that goroutine ends (or at once when ctx ended before the first sync).
func (c *clusterAuthInfo) run(ctx context.Context, done chan<- struct{}) {
	delay := 100 * time.Millisecond
	for {
		err := c.sync(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			close(done)
			return
		}
		c.logger.Warn("publishing the cluster authentication info failed, retrying", "err", err)
		if sleepCtx(ctx, delay) != nil {
			close(done)
			return
		}
		delay = min(2*delay, 5*time.Second)
	}
	go func() {
		defer close(done)
		t := time.NewTicker(c.interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := c.sync(ctx); err != nil && ctx.Err() == nil {
					c.logger.Warn("publishing the cluster authentication info failed", "err", err)
				}
			}
		}
	}()
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// addClusterAuthenticationInfo adds the
// "start-cluster-authentication-info-controller" post-start hook (kube's
// name). The hook returns once the configmap holds the data (so /readyz
// waits for it) and leaves a reconcile loop running until the server
// stops; a destroy function waits for that loop.
func addClusterAuthenticationInfo(s *server.GenericServer, c *clusterAuthInfo) error {
	done := make(chan struct{})
	var started atomic.Bool
	if err := s.AddPostStartHook(clusterAuthHook, func(ctx context.Context) error {
		started.Store(true)
		c.run(ctx, done)
		return nil
	}); err != nil {
		return err
	}
	s.AddDestroyFunc(func() {
		if started.Load() {
			<-done
		}
	})
	return nil
}
