package installer

import (
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/version"
)

// The lifecycle methods k8s.io/api's types carry
// (zz_generated.prerelease-lifecycle.go, lifecycle.go).
type (
	lifecycleDeprecated  interface{ APILifecycleDeprecated() (major, minor int) }
	lifecycleRemoved     interface{ APILifecycleRemoved() (major, minor int) }
	lifecycleReplacement interface {
		APILifecycleReplacement() schema.GroupVersionKind
	}
)

// deprecationWarning is the warning upstream's installer adds to every
// response about a resource whose type is deprecated at the served
// Kubernetes version ("v1 Endpoints is deprecated in v1.33+; use
// discovery.k8s.io/v1 EndpointSlice"), or "" (apiserver v0.37
// pkg/endpoints/deprecation: IsDeprecated, WarningMessage). obj is a new
// object of the resource, served as kind.
func deprecationWarning(obj runtime.Object, kind schema.GroupVersionKind) string {
	msg, _ := deprecation(obj, kind)
	return msg
}

// deprecation returns deprecationWarning's warning and the release that
// no longer serves the type, "<major>.<minor>" or "" when the type names
// none (upstream's RemovedRelease, the removed_release label of
// apiserver_requested_deprecated_apis); both "" for a type not
// deprecated.
func deprecation(obj runtime.Object, kind schema.GroupVersionKind) (msg, removed string) {
	d, ok := obj.(lifecycleDeprecated)
	if !ok {
		return "", ""
	}
	major, minor := d.APILifecycleDeprecated()
	if major == 0 && minor == 0 {
		return "", ""
	}
	if major > version.KubeMajor || (major == version.KubeMajor && minor > version.KubeMinor) {
		return "", ""
	}
	msg = fmt.Sprintf("%s %s is deprecated in v%d.%d+", kind.GroupVersion().String(), kind.Kind, major, minor)
	if r, ok := obj.(lifecycleRemoved); ok {
		if rmaj, rmin := r.APILifecycleRemoved(); rmaj != 0 || rmin != 0 {
			removed = fmt.Sprintf("%d.%d", rmaj, rmin)
			msg += ", unavailable in v" + removed + "+"
		}
	}
	if r, ok := obj.(lifecycleReplacement); ok {
		if gvk := r.APILifecycleReplacement(); !gvk.Empty() {
			msg += fmt.Sprintf("; use %s %s", gvk.GroupVersion().String(), gvk.Kind)
		}
	}
	return msg, removed
}

// deprecatedAll makes every handler of r add msg to its response's
// warnings and, once it has returned, record the request in d (as
// upstream's AddWarningsHandler and InstrumentRouteFunc wrap each route).
func (r *routes) deprecatedAll(msg string, d *metrics.DeprecatedAPI) {
	wrap := func(h http.Handler) http.Handler {
		if h == nil {
			return nil
		}
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			warning.AddWarning(req.Context(), msg)
			h.ServeHTTP(w, req)
			d.Requested(req.Context())
		})
	}
	for _, h := range []*http.Handler{&r.list, &r.watchList, &r.create, &r.deleteCollection, &r.get, &r.watch, &r.update, &r.patch, &r.delete, &r.connect} {
		*h = wrap(*h)
	}
}
