package controlplane

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
	saregistry "github.com/kapi-dev/kapi/pkg/controlplane/registry/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

var (
	serviceAccountsResource = corev1.SchemeGroupVersion.WithResource("serviceaccounts")
	secretsResource         = corev1.SchemeGroupVersion.WithResource("secrets")
	podsResource            = corev1.SchemeGroupVersion.WithResource("pods")
	nodesResource           = corev1.SchemeGroupVersion.WithResource("nodes")
)

// serviceAccountStorage is the serviceaccounts line: the resource and, when
// Config.ServiceAccountTokens is set, its token subresource (TokenRequest)
// over the secrets, pods and nodes lines.
func serviceAccountStorage(b *storageBuilder) (resourceStorage, error) {
	st, err := saregistry.NewREST(b.opts)
	if err != nil {
		return resourceStorage{}, err
	}
	rs := resourceStorage{storage: st}
	if b.config.ServiceAccountTokens == nil {
		return rs, nil
	}
	getters, err := serviceAccountGetters(b)
	if err != nil {
		st.Destroy()
		return resourceStorage{}, err
	}
	getters.accounts = st
	tokens := saregistry.NewTokenREST(*b.config.ServiceAccountTokens, st, optional(getters.pods), getters.secrets, optional(getters.nodes))
	rs.subresources = map[string]rest.Storage{"token": tokens}
	return rs, nil
}

// optional turns a nil getter into a nil interface.
func optional(g getterStorage) rest.Getter {
	if g == nil {
		return nil
	}
	return g
}

// serviceAccountGetters reads the secrets, pods and nodes lines (pods and
// nodes when the table serves them).
func serviceAccountGetters(b *storageBuilder) (*objectGetter, error) {
	g := &objectGetter{}
	var err error
	if g.secrets, err = storageAs[getterStorage](b, secretsResource); err != nil {
		return nil, err
	}
	if _, ok := b.lines[podsResource]; ok {
		if g.pods, err = storageAs[getterStorage](b, podsResource); err != nil {
			return nil, err
		}
	}
	if _, ok := b.lines[nodesResource]; ok {
		if g.nodes, err = storageAs[getterStorage](b, nodesResource); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// getterStorage is the storage of a line objects can be read from.
type getterStorage interface {
	rest.Storage
	rest.Getter
}

// objectGetter reads what service-account tokens name, from storage
// (consistent reads: a deleted object is gone for the next request).
type objectGetter struct {
	accounts, secrets, pods, nodes getterStorage
}

var _ serviceaccount.Getter = (*objectGetter)(nil)

func getAs[T any](ctx context.Context, g getterStorage, namespace, name, what string) (T, error) {
	var zero T
	if g == nil {
		return zero, fmt.Errorf("%s are not served", what)
	}
	// The request's own info would name the request's resource in errors.
	ctx = request.WithNamespace(ctx, namespace)
	ctx = request.WithRequestInfo(ctx, &request.RequestInfo{IsResourceRequest: true, Verb: "get", APIPrefix: "api", APIVersion: "v1",
		Namespace: namespace, Resource: what, Name: name, Parts: []string{what, name}})
	obj, err := g.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("%s storage returned a %T", what, obj)
	}
	return t, nil
}

func (g *objectGetter) GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	return getAs[*corev1.ServiceAccount](ctx, g.accounts, namespace, name, "serviceaccounts")
}

func (g *objectGetter) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return getAs[*corev1.Secret](ctx, g.secrets, namespace, name, "secrets")
}

func (g *objectGetter) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return getAs[*corev1.Pod](ctx, g.pods, namespace, name, "pods")
}

func (g *objectGetter) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	return getAs[*corev1.Node](ctx, g.nodes, "", name, "nodes")
}

// serviceAccountObjects returns the getter of what tokens name, for
// Config.OnServiceAccountObjects.
func serviceAccountObjects(b *storageBuilder) (serviceaccount.Getter, error) {
	g, err := serviceAccountGetters(b)
	if err != nil {
		return nil, err
	}
	if g.accounts, err = storageAs[getterStorage](b, serviceAccountsResource); err != nil {
		return nil, err
	}
	return g, nil
}
