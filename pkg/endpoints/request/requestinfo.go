package request

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// RequestInfo is what kube-apiserver learns from a request's method and path.
//
// Resource paths:
//
//	/api/{version}/{resource}[/{name}[/{subresource}]]
//	/api/{version}/namespaces/{namespace}/{resource}[/{name}[/{subresource}]]
//	/apis/{group}/{version}/... (same shapes)
//	/api|apis/.../watch/... (legacy watch paths)
//
// Anything else is a non-resource request whose verb is the lowercase method.
type RequestInfo struct {
	IsResourceRequest bool
	Path              string
	Verb              string // get list watch create update patch delete deletecollection, or http method
	APIPrefix         string // "api" or "apis"
	APIGroup          string
	APIVersion        string
	Namespace         string
	Resource          string
	Subresource       string
	// Name is the object's name: the path's, or, for a list or watch of
	// a collection, the name its metadata.name field selector requires
	// (as upstream, so RBAC's resourceNames, audit and metrics see it).
	// Routing uses the path's ([RequestInfo.PathName]).
	Name  string
	Parts []string
	// FieldSelector and LabelSelector are a list, watch or
	// deletecollection's raw selector parameters (the first value), for
	// authorization; empty for other verbs and for the legacy /watch/
	// paths, as upstream (verbsWithSelectors).
	FieldSelector string
	LabelSelector string
}

// PathName is the name in the request's path ("" for a collection).
func (i *RequestInfo) PathName() string {
	if i.IsResourceRequest && len(i.Parts) >= 2 {
		return i.Parts[1]
	}
	return ""
}

// Resolver turns requests into RequestInfo.
type Resolver struct {
	APIPrefixes          sets.Set[string] // "api", "apis"
	GrouplessAPIPrefixes sets.Set[string] // "api"
}

// NewResolver returns the resolver kube-apiserver uses.
func NewResolver() *Resolver {
	return &Resolver{
		APIPrefixes:          sets.New("api", "apis"),
		GrouplessAPIPrefixes: sets.New("api"),
	}
}

var specialVerbs = sets.New("proxy", "watch")
var specialVerbsNoSubresources = sets.New("proxy")
var namespaceSubresources = sets.New("status", "finalize")

// Resolve parses req. The error is only for requests whose URL cannot be
// understood (the filter answers 500 with it, as upstream does).
func (r *Resolver) Resolve(req *http.Request) (*RequestInfo, error) {
	if req.URL == nil {
		return nil, fmt.Errorf("request has no URL")
	}
	// The info and its path's segments in one allocation.
	x := &resolved{info: RequestInfo{
		Path: req.URL.Path,
		Verb: lowerMethod(req.Method),
	}}
	info := &x.info
	parts := splitPathInto(req.URL.Path, x.parts[:0])
	if len(parts) < 3 || !r.APIPrefixes.Has(parts[0]) {
		return info, nil // non-resource: /, /healthz, /api, /api/v1 (discovery)...
	}
	info.APIPrefix = parts[0]
	cur := parts[1:]
	if !r.GrouplessAPIPrefixes.Has(info.APIPrefix) {
		if len(cur) < 3 { // /apis/group/version is discovery
			return info, nil
		}
		info.APIGroup = cur[0]
		cur = cur[1:]
	}
	info.IsResourceRequest = true
	verbViaPath := false
	info.APIVersion = cur[0]
	cur = cur[1:]

	if specialVerbs.Has(cur[0]) {
		if len(cur) < 2 {
			return nil, fmt.Errorf("unable to determine kind and namespace from url %v", req.URL)
		}
		info.Verb = cur[0]
		verbViaPath = true
		cur = cur[1:]
	} else {
		switch req.Method {
		case http.MethodPost:
			info.Verb = "create"
		case http.MethodGet, http.MethodHead:
			info.Verb = "get"
		case http.MethodPut:
			info.Verb = "update"
		case http.MethodPatch:
			info.Verb = "patch"
		case http.MethodDelete:
			info.Verb = "delete"
		default:
			info.Verb = ""
		}
	}

	if cur[0] == "namespaces" {
		if len(cur) > 1 {
			info.Namespace = cur[1]
			// /namespaces/{ns}/{resource}... unless it is a namespace subresource
			if len(cur) > 2 && !namespaceSubresources.Has(cur[2]) {
				cur = cur[2:]
			}
		}
	}
	info.Parts = cur

	switch {
	case len(cur) >= 3 && !specialVerbsNoSubresources.Has(info.Verb):
		info.Subresource = cur[2]
		fallthrough
	case len(cur) >= 2:
		info.Name = cur[1]
		fallthrough
	case len(cur) >= 1:
		info.Resource = cur[0]
	}

	// A GET without a name is a list, or a watch when ?watch= asks for
	// one. A GET of one object stays a get whatever ?watch= says, as
	// upstream (one object is watched through /watch/.../{name} or a
	// metadata.name field selector).
	var query url.Values
	if info.Name == "" && info.Verb == "get" {
		query = req.URL.Query()
		info.Verb = "list"
		if WatchRequested(query) {
			info.Verb = "watch"
		}
		if query.Has("fieldSelector") {
			info.Name = selectedName(query)
		}
	}
	if info.Verb == "delete" && info.Name == "" {
		info.Verb = "deletecollection"
	}
	if !verbViaPath && (info.Verb == "list" || info.Verb == "watch" || info.Verb == "deletecollection") && req.URL.RawQuery != "" {
		if query == nil {
			query = req.URL.Query()
		}
		if v := query["fieldSelector"]; len(v) > 0 {
			info.FieldSelector = v[0]
		}
		if v := query["labelSelector"]; len(v) > 0 {
			info.LabelSelector = v[0]
		}
	}
	return info, nil
}

// selectedName is the name a list's metadata.name field selector
// requires, as upstream's request info finds it: only when the whole
// query decodes as ListOptions, and the name is a valid path segment.
func selectedName(query url.Values) string {
	var opts metainternalversion.ListOptions
	if err := metainternalversionscheme.ParameterCodec.DecodeParameters(query, metav1.SchemeGroupVersion, &opts); err != nil || opts.FieldSelector == nil {
		return ""
	}
	name, ok := opts.FieldSelector.RequiresExactMatch("metadata.name")
	if !ok || len(content.IsPathSegmentName(name)) > 0 {
		return ""
	}
	return name
}

// WatchRequested reports whether a query asks for a watch, with the rule
// of the `watch` parameter of metav1.ListOptions (apimachinery's
// runtime.Convert_Slice_string_To_bool, which upstream's request info
// applies too): present and its first value neither "0" nor "false" (any
// case). So ?watch=TRUE, ?watch=yes, ?watch=abc and ?watch= are watches;
// no value is unparsable. This is the one place kapi decides it: the
// request info's verb carries the answer to authorization, audit,
// max-in-flight, the timeout and the list handler alike.
func WatchRequested(q url.Values) bool {
	v, ok := q["watch"]
	if !ok || len(v) == 0 {
		return false
	}
	return v[0] != "0" && !strings.EqualFold(v[0], "false")
}

// lowerMethod is strings.ToLower(method), without making the string for
// the usual methods (an allocation per request).
func lowerMethod(method string) string {
	switch method {
	case http.MethodGet:
		return "get"
	case http.MethodPut:
		return "put"
	case http.MethodPost:
		return "post"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	case http.MethodHead:
		return "head"
	case http.MethodOptions:
		return "options"
	}
	return strings.ToLower(method)
}

// resolved is a RequestInfo with room for the segments of its path
// (a namespaced subresource's path has 8).
type resolved struct {
	info  RequestInfo
	parts [8]string
}

// splitPathInto is the segments of p without its leading and trailing
// slashes (strings.Split of the rest; nil for none), appended to buf
// (grown past its capacity as append does); the result's capacity is its
// length, as strings.Split's.
func splitPathInto(p string, buf []string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	for {
		i := strings.IndexByte(p, '/')
		if i < 0 {
			buf = append(buf, p)
			return buf[:len(buf):len(buf)]
		}
		buf = append(buf, p[:i])
		p = p[i+1:]
	}
}

var longRunningVerbs = sets.New("watch", "proxy")
var longRunningSubresources = sets.New("attach", "exec", "proxy", "log", "portforward")

// IsLongRunning reports whether a request is long-running (lifecycle.md 29):
// verb watch or proxy; subresource attach, exec, proxy, log or portforward;
// or a non-resource path under /debug/pprof/.
func IsLongRunning(info *RequestInfo) bool {
	if info == nil {
		return false
	}
	if info.IsResourceRequest {
		return longRunningVerbs.Has(info.Verb) || longRunningSubresources.Has(info.Subresource)
	}
	return strings.HasPrefix(info.Path, "/debug/pprof/")
}

// IsReadOnly reports whether the verb does not mutate (max-in-flight puts
// get, list and watch in the read-only pool).
func IsReadOnly(info *RequestInfo) bool {
	if info == nil {
		return true
	}
	if !info.IsResourceRequest {
		return info.Verb == "get" || info.Verb == "head" || info.Verb == "options"
	}
	return info.Verb == "get" || info.Verb == "list" || info.Verb == "watch"
}
