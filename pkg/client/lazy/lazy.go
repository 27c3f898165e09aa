// Package lazy is a kubernetes.Interface whose group clients are made on
// first use.
//
// kubernetes.NewForConfig makes a REST client for each of client-go's 55
// group versions at once. Each lives in its own package, so a server that
// talks to a handful of groups still runs (and faults in from the binary)
// the constructors of all of them, once per clientset: the in-process
// controllers and hooks make four. Clientset here makes what NewForConfig
// makes up front (the shared HTTP client, the shared rate limiter, the
// core/v1 client, whose construction checks the config as every group's
// does), and each other group's client on its first call, from the same
// config and HTTP client: the clients are the ones NewForConfig would have
// made.
package lazy

import (
	"fmt"
	"net/http"
	"sync"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

//go:generate go run ../../../hack/lazyclientset

// Clientset is a kubernetes.Interface that makes each group's client on
// its first call.
type Clientset struct {
	config     rest.Config
	httpClient *http.Client
	groups

	discoveryOnce sync.Once
	discovery     *discovery.DiscoveryClient
}

var _ kubernetes.Interface = (*Clientset)(nil)

// NewForConfig is kubernetes.NewForConfig with the group clients made on
// first use. It fails where kubernetes.NewForConfig fails.
func NewForConfig(c *rest.Config) (*Clientset, error) {
	config := *c
	if config.UserAgent == "" {
		config.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	httpClient, err := rest.HTTPClientFor(&config)
	if err != nil {
		return nil, err
	}
	// As kubernetes.NewForConfigAndClient: one rate limiter shared by
	// every group's client.
	if config.RateLimiter == nil && config.QPS > 0 {
		if config.Burst <= 0 {
			return nil, fmt.Errorf("burst is required to be greater than 0 when RateLimiter is not set and QPS is set to greater than 0")
		}
		config.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(config.QPS, config.Burst)
	}
	// The group clients differ only in their GroupVersion and API path:
	// what can make one fail (the host, the TLS files) is checked by
	// making core/v1's now, so that the later ones cannot fail.
	core, err := corev1.NewForConfigAndClient(&config, httpClient)
	if err != nil {
		return nil, err
	}
	cs := &Clientset{config: config, httpClient: httpClient}
	cs.coreV1Once.Do(func() { cs.coreV1 = core })
	return cs, nil
}

// Discovery returns the discovery client, made on the first call.
func (c *Clientset) Discovery() discovery.DiscoveryInterfaces {
	if c == nil {
		return nil
	}
	c.discoveryOnce.Do(func() { c.discovery = must(c, discovery.NewDiscoveryClientForConfigAndClient) })
	return c.discovery
}

// must makes one client from the clientset's config and HTTP client. The
// config was checked by NewForConfig (core/v1's client), so an error here is a
// programming error.
func must[T any](c *Clientset, newFor func(*rest.Config, *http.Client) (T, error)) T {
	v, err := newFor(&c.config, c.httpClient)
	if err != nil {
		panic(fmt.Sprintf("lazy clientset: %v", err))
	}
	return v
}
