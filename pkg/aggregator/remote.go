package aggregator

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/aggregator/apiservice"
	"github.com/kapi-dev/kapi/pkg/auth/requestheader"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/webhook/serviceresolver"
)

// discoveryAttempts is how many discovery requests one probe sends at
// once (each to an endpoint chosen at random); one success passes.
const discoveryAttempts = 5

// probeUser is who the discovery probe is sent as (upstream's).
var probeUser = &user.Info{Name: "system:kube-aggregator", Groups: []string{"system:masters"}}

// probe is the state of one non-local APIService's checks.
type probe struct {
	spec    apiregistrationv1.APIServiceSpec // what the last probe checked
	running bool
	next    time.Time
	again   bool // its service changed while it ran: probe again at once
}

type probeResult struct {
	name      string
	available bool
}

// runRemoteAvailability keeps the Available condition of every non-local
// APIService (the apiservice-status-remote-available-controller). Each
// APIService is probed in its own goroutine, at once when it appears or
// its spec changes, then every AvailabilityPeriod while Available and
// every min(AvailabilityPeriod, 5s) while not; a backend that hangs holds
// only its own probe, for at most DiscoveryTimeout.
func (a *Aggregator) runRemoteAvailability(ctx context.Context, changed <-chan struct{}) {
	if !a.informer.waitSynced(ctx) {
		return
	}
	period := a.cfg.AvailabilityPeriod
	failPeriod := min(period, 5*time.Second)
	probes := map[string]*probe{}
	results := make(chan probeResult)
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := time.NewTimer(period)
	defer timer.Stop()
	for {
		now := time.Now()
		wake := now.Add(period)
		live := map[string]bool{}
		for _, svc := range a.informer.list() {
			if apiservice.IsLocal(svc) {
				continue
			}
			live[svc.Name] = true
			p, ok := probes[svc.Name]
			if !ok {
				p = &probe{}
				probes[svc.Name] = p
			}
			if p.running {
				continue
			}
			if ok && now.Before(p.next) && equality.Semantic.DeepEqual(p.spec, svc.Spec) {
				wake = minTime(wake, p.next)
				continue
			}
			p.running = true
			p.spec = *svc.Spec.DeepCopy()
			wg.Add(1)
			go func(svc *apiregistrationv1.APIService) {
				defer wg.Done()
				r := probeResult{name: svc.Name, available: a.probeAndRecord(ctx, svc)}
				select {
				case results <- r:
				case <-ctx.Done():
				}
			}(svc)
		}
		for name, p := range probes {
			if !live[name] && !p.running {
				delete(probes, name)
			}
		}
		timer.Reset(time.Until(wake))
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-timer.C:
		case key := <-a.cfg.ServiceChanges: // nil channel: never
			for _, svc := range a.informer.list() {
				ref := svc.Spec.Service
				if ref == nil || ref.Namespace != key.Namespace || ref.Name != key.Name {
					continue
				}
				if p, ok := probes[svc.Name]; ok {
					p.next = time.Time{}
					p.again = p.running
				}
			}
		case r := <-results:
			if p, ok := probes[r.name]; ok {
				p.running = false
				p.next = time.Now().Add(failPeriod)
				if r.available {
					p.next = time.Now().Add(period)
				}
				if p.again {
					p.next, p.again = time.Time{}, false
				}
			}
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// probeAndRecord checks svc and writes its Available condition if that
// changed; it reports whether svc is available.
func (a *Aggregator) probeAndRecord(ctx context.Context, svc *apiregistrationv1.APIService) bool {
	c := a.check(ctx, svc)
	if ctx.Err() != nil {
		return false
	}
	cur := a.informer.get(svc.Name)
	if cur == nil || !equality.Semantic.DeepEqual(cur.Spec, svc.Spec) {
		return false // deleted or changed meanwhile: probed again
	}
	a.availability.synced(svc.Name, c.Status == apiregistrationv1.ConditionTrue)
	if !sameCondition(cur, c) {
		old := apiservice.Condition(cur, apiregistrationv1.Available)
		oldStatus := apiregistrationv1.ConditionUnknown
		if old != nil {
			oldStatus = old.Status
		}
		a.logger.Info("changing apiservice availability", "apiservice", svc.Name, "oldStatus", oldStatus, "newStatus", c.Status, "reason", c.Reason, "message", c.Message)
		if err := a.setAvailable(ctx, svc.Name, c); err != nil && ctx.Err() == nil {
			a.logger.Warn("remote apiservice availability", "apiservice", svc.Name, "err", err)
		}
	}
	return c.Status == apiregistrationv1.ConditionTrue
}

// check returns svc's Available condition, with upstream's reasons and
// messages: the service must exist, a ClusterIP service must have the
// port and ready endpoints on it, and the backend must answer a GET of
// the group-version's discovery with a 2xx.
func (a *Aggregator) check(ctx context.Context, svc *apiregistrationv1.APIService) apiregistrationv1.APIServiceCondition {
	ref := svc.Spec.Service
	cond := func(status apiregistrationv1.ConditionStatus, reason, msg string) apiregistrationv1.APIServiceCondition {
		return apiregistrationv1.APIServiceCondition{Type: apiregistrationv1.Available, Status: status, Reason: reason, Message: msg, LastTransitionTime: now()}
	}
	service, err := a.cfg.Services.GetService(ctx, ref.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return cond(apiregistrationv1.ConditionFalse, "ServiceNotFound", fmt.Sprintf("service/%s in %q is not present", ref.Name, ref.Namespace))
	}
	if err != nil {
		return cond(apiregistrationv1.ConditionUnknown, "ServiceAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err))
	}
	if service.Spec.Type == "" || service.Spec.Type == corev1.ServiceTypeClusterIP {
		var portName string
		found := false
		for _, p := range service.Spec.Ports {
			if p.Port == port(svc) {
				portName, found = p.Name, true
				break
			}
		}
		if !found {
			return cond(apiregistrationv1.ConditionFalse, "ServicePortError", fmt.Sprintf("service/%s in %q is not listening on port %d", ref.Name, ref.Namespace, port(svc)))
		}
		if c, ok := a.checkEndpoints(ctx, ref, portName, cond); !ok {
			return c
		}
	}
	if err := a.checkDiscovery(ctx, svc); err != nil {
		return cond(apiregistrationv1.ConditionFalse, "FailedDiscoveryCheck", err.Error())
	}
	return cond(apiregistrationv1.ConditionTrue, "Passed", "all checks passed")
}

// checkEndpoints checks that the service has a ready endpoint on
// portName: in its EndpointSlices, or (if it has none) its Endpoints.
func (a *Aggregator) checkEndpoints(ctx context.Context, ref *apiregistrationv1.ServiceReference, portName string,
	cond func(apiregistrationv1.ConditionStatus, string, string) apiregistrationv1.APIServiceCondition) (apiregistrationv1.APIServiceCondition, bool) {
	slices, err := a.cfg.Services.ListEndpointSlices(ctx, ref.Namespace, ref.Name)
	if err != nil {
		return cond(apiregistrationv1.ConditionUnknown, "EndpointsAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err)), false
	}
	if len(slices) > 0 {
		if !slicesHaveEndpoint(slices, portName) {
			return cond(apiregistrationv1.ConditionFalse, "MissingEndpoints", fmt.Sprintf("endpointslices for service/%s in %q have no addresses with port name %q", ref.Name, ref.Namespace, portName)), false
		}
		return apiregistrationv1.APIServiceCondition{}, true
	}
	addrs, err := serviceresolver.ReadyAddresses(ctx, a.cfg.Services, ref.Namespace, ref.Name, portName)
	if err != nil {
		return cond(apiregistrationv1.ConditionUnknown, "EndpointsAccessError", fmt.Sprintf("service/%s in %q cannot be checked due to: %v", ref.Name, ref.Namespace, err)), false
	}
	if len(addrs) == 0 {
		return cond(apiregistrationv1.ConditionFalse, "EndpointsNotFound", fmt.Sprintf("cannot find endpointslices for service/%s in %q", ref.Name, ref.Namespace)), false
	}
	return apiregistrationv1.APIServiceCondition{}, true
}

// slicesHaveEndpoint is upstream's test: some slice has a ready endpoint
// and a port named portName.
func slicesHaveEndpoint(slices []discoveryv1.EndpointSlice, portName string) bool {
	for _, s := range slices {
		ready := false
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ready = true
				break
			}
		}
		if !ready {
			continue
		}
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == portName && p.Port != nil {
				return true
			}
		}
	}
	return false
}

// checkDiscovery GETs /apis/<group>/<version> (/api/v1 for the legacy
// group) from the backend, discoveryAttempts times at once; nil if any
// answers 2xx, else the last error.
func (a *Aggregator) checkDiscovery(ctx context.Context, svc *apiregistrationv1.APIService) error {
	t, err := a.transportFor(svc)
	if err != nil {
		return err
	}
	client := &http.Client{
		Transport:     t.RoundTripper(),
		Timeout:       a.cfg.DiscoveryTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	path := "/apis/" + svc.Spec.Group + "/" + svc.Spec.Version
	if svc.Name == "v1." {
		path = "/api/" + svc.Spec.Version
	}
	results := make(chan error, discoveryAttempts)
	var wg sync.WaitGroup
	for range discoveryAttempts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- a.discoveryOnce(ctx, client, svc, path)
		}()
	}
	wg.Wait()
	close(results)
	var last error
	for err := range results {
		if err == nil {
			return nil
		}
		last = err
	}
	return last
}

func (a *Aggregator) discoveryOnce(ctx context.Context, client *http.Client, svc *apiregistrationv1.APIService, path string) error {
	u, err := serviceresolver.Resolve(ctx, a.cfg.Services, svc.Spec.Service.Namespace, svc.Spec.Service.Name, port(svc))
	if err != nil {
		return err
	}
	u.Path = path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return err
	}
	requestheader.SetHeaders(req.Header, probeUser)
	resp, err := client.Do(req)
	if err != nil {
		client.CloseIdleConnections()
		return fmt.Errorf("failing or missing response from %v: %w", u, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode < http.StatusOK || resp.StatusCode >= http.StatusMultipleChoices {
		return fmt.Errorf("failing or missing response from %v: bad status from %v: %d", u, u, resp.StatusCode)
	}
	return nil
}
