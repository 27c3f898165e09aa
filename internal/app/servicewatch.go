package app

import (
	"context"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// watcher is a storage that can be watched (the services and
// endpointslices stores).
type watcher interface {
	Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error)
}

// watchServiceChanges sends to out the namespace/name of every Service
// that changes, and of the Service of every EndpointSlice that changes,
// until ctx ends (the aggregator probes the APIServices using them
// again). A watch that ends is started again after a second; what
// happened meanwhile is covered by the aggregator's periodic probes.
func watchServiceChanges(ctx context.Context, services, slices watcher, out chan<- types.NamespacedName, logger *slog.Logger) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		followChanges(ctx, slices, out, logger)
	}()
	followChanges(ctx, services, out, logger)
	<-done
}

func followChanges(ctx context.Context, w watcher, out chan<- types.NamespacedName, logger *slog.Logger) {
	sys := request.WithUser(request.WithNamespace(ctx, ""), &user.Info{Name: user.APIServerUser, Groups: []string{user.SystemPrivileged}})
	for ctx.Err() == nil {
		wi, err := w.Watch(sys, &metainternalversion.ListOptions{})
		if err != nil {
			logger.Debug("watch for service changes", "err", err)
		} else {
			forwardChanges(ctx, wi, out)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func forwardChanges(ctx context.Context, wi watch.Interface, out chan<- types.NamespacedName) {
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			var key types.NamespacedName
			switch o := ev.Object.(type) {
			case *corev1.Service:
				key = types.NamespacedName{Namespace: o.Namespace, Name: o.Name}
			case *discoveryv1.EndpointSlice:
				key = types.NamespacedName{Namespace: o.Namespace, Name: o.Labels[discoveryv1.LabelServiceName]}
			default:
				continue
			}
			if key.Name == "" {
				continue
			}
			select {
			case out <- key:
			case <-ctx.Done():
				return
			}
		}
	}
}
