package metrics

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/audit"
)

// The audit annotations of a request for a deprecated API (upstream's
// deprecatedAnnotationKey and removedReleaseAnnotationKey).
const (
	DeprecatedAnnotation     = "k8s.io/deprecated"
	RemovedReleaseAnnotation = "k8s.io/removed-release"
)

func newDeprecatedAPIs() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "apiserver_requested_deprecated_apis",
		Help: "[STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.",
	}, []string{"group", "version", "resource", "subresource", "removed_release"})
}

// DeprecatedAPI records the requests for one deprecated API: a resource
// or subresource of a group-version that is deprecated at the served
// Kubernetes version (a built-in type's APILifecycleDeprecated) or a
// deprecated version of a CRD. A nil *DeprecatedAPI records nothing; it
// is safe for concurrent use.
type DeprecatedAPI struct {
	vec            *prometheus.GaugeVec
	labels         [5]string
	removedRelease string
	once           sync.Once
}

// DeprecatedAPI returns the recorder of requests for a deprecated API.
// removedRelease is "<major>.<minor>" of the release that no longer
// serves it, or "" (always "" for CRDs, as upstream). The series is made
// by the first request, not here: upstream's gauge has a series only for
// what was requested. Resolve it once per route.
func (m *Metrics) DeprecatedAPI(group, version, resource, subresource, removedRelease string) *DeprecatedAPI {
	if m == nil {
		return nil
	}
	return &DeprecatedAPI{
		vec:            m.deprecatedAPIs,
		labels:         [5]string{group, version, resource, subresource, removedRelease},
		removedRelease: removedRelease,
	}
}

// Requested records that a request for the API was served: its series of
// apiserver_requested_deprecated_apis is 1 from then on, and the request's
// audit event gets k8s.io/deprecated=true and, if the API has a removal
// release, k8s.io/removed-release. Upstream records it (MonitorRequest)
// once the route's handler has returned, whatever the answer, so a
// watch counts when it ends; callers do the same.
func (d *DeprecatedAPI) Requested(ctx context.Context) {
	if d == nil {
		return
	}
	d.once.Do(func() {
		l := d.labels
		d.vec.WithLabelValues(l[0], l[1], l[2], l[3], l[4]).Set(1)
	})
	audit.AddAnnotation(ctx, DeprecatedAnnotation, "true")
	if d.removedRelease != "" {
		audit.AddAnnotation(ctx, RemovedReleaseAnnotation, d.removedRelease)
	}
}
