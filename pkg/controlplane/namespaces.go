package controlplane

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/namespace"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// The namespaces every cluster has, created at start (as kube-apiserver's
// system-namespaces controller does).
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// systemContext is the context of the server's own requests.
func systemContext(ctx context.Context, ns string) context.Context {
	ctx = request.WithUser(ctx, &user.Info{Name: user.APIServerUser, Groups: []string{user.SystemPrivileged}})
	return request.WithNamespace(ctx, ns)
}

// bootstrapNamespaces creates the system namespaces that are missing.
// One that exists is left alone without computing the create it would
// have been (its managed fields: ~0.1 ms each, on every start from the
// bootstrap image, where all exist), as upstream's system-namespaces
// controller reads first and creates only what is missing.
func bootstrapNamespaces(ctx context.Context, ns *namespace.REST, logger *slog.Logger) error {
	for _, name := range systemNamespaces {
		if _, err := ns.Get(systemContext(ctx, ""), name, &metav1.GetOptions{}); err == nil {
			continue
		}
		// Defaulted as a client's request body is (the name label), and
		// recorded as kube-apiserver's write.
		obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		scheme.Scheme.Default(obj)
		want, err := createdAsAPIServer(ns, corev1.SchemeGroupVersion.WithKind("Namespace"), obj)
		if err != nil {
			return err
		}
		for attempt := 0; ; attempt++ {
			_, err := ns.Create(systemContext(ctx, ""), want.DeepCopyObject(), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			if err == nil || apierrors.IsAlreadyExists(err) {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if attempt > 50 {
				return fmt.Errorf("create namespace %s: %w", name, err)
			}
			logger.Warn("creating system namespace failed, retrying", "namespace", name, "err", err)
			time.Sleep(100 * time.Millisecond)
		}
	}
	return nil
}
