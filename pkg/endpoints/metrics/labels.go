package metrics

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// otherVerb is the verb label of methods upstream does not report by name.
const otherVerb = "other"

// The label values below follow upstream's MonitorRequest, CleanScope,
// CanonicalVerb, CleanVerb and cleanDryRun (k8s.io/apiserver
// pkg/endpoints/metrics/metrics.go).

// requestKey returns the labels of a request, and false for requests
// upstream does not record in apiserver_request_total: non-resource
// requests other than the health endpoints, aggregated discovery and the
// OpenAPI v3 documents.
func requestKey(r *http.Request, info *request.RequestInfo) (seriesKey, bool) {
	if info == nil || !info.IsResourceRequest {
		path := r.URL.Path
		var k seriesKey
		switch {
		case path == "/healthz", path == "/livez", path == "/readyz":
			// Installed with component "" (healthz.InstallPathHandler).
			k.subresource = path
		case path == "/api", path == "/apis":
			// Aggregated discovery is instrumented, legacy discovery
			// is not; its subresource label is the resource manager's
			// path, without the slash (NewResourceManager("apis"),
			// discovery/aggregated/handler.go; kube-apiserver v1.37.2
			// reports subresource="apis").
			if !strings.Contains(r.Header.Get("Accept"), "APIGroupDiscoveryList") {
				return seriesKey{}, false
			}
			k.subresource = path[1:]
			k.component = Component
		case path == "/openapi/v3":
			// The aggregator's OpenAPI v3 handlers, component ""
			// (kube-aggregator controllers/openapiv3/aggregator,
			// specProxier.register); v2 is not instrumented.
			k.subresource = "openapi/v3"
		case strings.HasPrefix(path, "/openapi/v3/"):
			k.subresource = "openapi/v3/"
		default:
			return seriesKey{}, false
		}
		k.verb = reportedVerb(r, nil, "")
		k.dryRun = dryRunValue(r.URL)
		return k, true
	}
	scope := Scope(info)
	return seriesKey{
		verb:        reportedVerb(r, info, scope),
		dryRun:      dryRunValue(r.URL),
		group:       info.APIGroup,
		version:     info.APIVersion,
		resource:    info.Resource,
		subresource: info.Subresource,
		scope:       scope,
		component:   Component,
	}, true
}

// Scope is the scope label: "resource" for a named object or a create,
// "namespace" for a namespaced collection, "cluster" for other resource
// requests, "" for non-resource ones.
func Scope(info *request.RequestInfo) string {
	switch {
	case info == nil:
		return ""
	case info.Name != "" || info.Verb == "create":
		return "resource"
	case info.Namespace != "":
		return "namespace"
	case info.IsResourceRequest:
		return "cluster"
	}
	return ""
}

// validVerbs are the verbs reported by name; others are "other".
var validVerbs = map[string]bool{
	"APPLY": true, "CONNECT": true, "CREATE": true, "DELETE": true, "DELETECOLLECTION": true,
	"GET": true, "LIST": true, "PATCH": true, "POST": true, "PROXY": true, "PUT": true,
	"UPDATE": true, "WATCH": true, "WATCHLIST": true,
}

// connectSubresources are reported as CONNECT.
var connectSubresources = map[string]bool{"log": true, "exec": true, "portforward": true, "attach": true, "proxy": true}

// reportedVerb is the verb label: the HTTP method, with collection GETs
// as LIST, watches as WATCH, apply patches as APPLY, connect-style
// subresources as CONNECT and unknown methods as "other".
func reportedVerb(r *http.Request, info *request.RequestInfo, scope string) string {
	verb := upperMethod(r.Method)
	if (verb == http.MethodGet || verb == http.MethodHead) && scope != "resource" && scope != "" {
		verb = "LIST"
	} else if verb == http.MethodHead {
		verb = http.MethodGet
	}
	if info != nil && info.IsResourceRequest {
		switch {
		case info.Verb == "watch":
			verb = "WATCH"
		case connectSubresources[info.Subresource], info.Verb == "proxy":
			verb = "CONNECT"
		}
	}
	if verb == http.MethodPatch && r.Header.Get("Content-Type") == "application/apply-patch+yaml" {
		verb = "APPLY"
	}
	if !validVerbs[verb] {
		return otherVerb
	}
	return verb
}

// upperMethod upper-cases method without allocating for the usual ones.
func upperMethod(method string) string {
	switch method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead:
		return method
	}
	return strings.ToUpper(method)
}

// dryRunValue is the dry_run label: "" without a dryRun parameter,
// "invalid" when a value is not All, else the distinct values, sorted,
// joined by commas, which is "All" (metav1.DryRunAll is the only value
// allowed). It scans the query itself: parsing it would allocate on every
// dry-run request.
func dryRunValue(u *url.URL) string {
	q := u.RawQuery
	if !strings.Contains(q, "dryRun") && !strings.Contains(q, "%") {
		return ""
	}
	seen := false
	for q != "" {
		var part string
		part, q, _ = strings.Cut(q, "&")
		key, value, _ := strings.Cut(part, "=")
		if key = unescape(key); key != "dryRun" {
			continue
		}
		seen = true
		if unescape(value) != "All" {
			return "invalid"
		}
	}
	if !seen {
		return ""
	}
	return "All"
}

// unescape decodes a query component as url.ParseQuery does; a component
// that does not decode is returned as is (and then matches nothing).
func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

// codeStrings holds the code label of the usual status codes, so that
// recording one does not allocate.
var codeStrings = func() [600]string {
	var s [600]string
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func codeString(code int) string {
	if code >= 0 && code < len(codeStrings) {
		return codeStrings[code]
	}
	return strconv.Itoa(code)
}
