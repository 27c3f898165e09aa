package controlplane

import (
	"context"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission/policy/mutating"
	"github.com/kapi-dev/kapi/pkg/admission/policy/params"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server"
)

// mutatingPolicyPlugin makes the MutatingAdmissionPolicy plugin over the
// policies' and bindings' stores (params read through the loopback
// client, when Config.LoopbackClientConfig is set; apply configurations
// merged with the built-in kinds' schemas), and the post-start hook that
// keeps them up to date until the server stops.
func mutatingPolicyPlugin(s *server.GenericServer, c Config, b *storageBuilder, ns clusterScoped) (*mutating.Plugin, error) {
	policies, err := storageAs[*generic.Store](b, mutatingPoliciesResource)
	if err != nil {
		return nil, err
	}
	bindings, err := storageAs[*generic.Store](b, mutatingBindingsResource)
	if err != nil {
		return nil, err
	}
	opts := mutating.Options{
		Namespaces: func(ctx context.Context, name string) (*corev1.Namespace, error) {
			obj, err := ns.Get(ctx, name, &metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return obj.(*corev1.Namespace), nil
		},
		Default:       func(obj runtime.Object) { scheme.Scheme.Default(obj) },
		TypeConverter: fieldmanager.TypeConverter,
		Authorizer:    c.Authorizer,
		Logger:        c.Logger.With("plugin", mutating.PluginName),
	}
	if c.LoopbackClientConfig != nil {
		opts.Params = params.New(c.LoopbackClientConfig)
	}
	p := mutating.New(policies, bindings, opts)
	var wg sync.WaitGroup
	var started atomic.Bool
	if err := s.AddPostStartHook("start-mutating-admission-policy-informers", func(ctx context.Context) error {
		started.Store(true)
		wg.Add(1)
		go func() { defer wg.Done(); p.Run(ctx) }()
		return nil
	}); err != nil {
		return nil, err
	}
	s.AddDestroyFunc(func() {
		if started.Load() {
			wg.Wait()
		}
	})
	return p, nil
}
