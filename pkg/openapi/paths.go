package openapi

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Style says whose rules a group-version's operations follow.
type Style int

const (
	// Installer is the rules of k8s.io/apiserver's installer
	// (pkg/endpoints/installer.go, registerResourceHandlers): the
	// operations follow the verbs each (sub)resource serves, namespaced
	// collections are also listed across namespaces, and the deprecated
	// watch paths (/watch/...) are published. Built-in resources, and
	// aggregated servers built on k8s.io/apiserver, publish these.
	Installer Style = iota
	// CustomResource is the rules of apiextensions-apiserver's builder
	// (pkg/controller/openapi/builder/builder.go): a fixed set of
	// operations per custom resource, its status and scale subresources
	// (get, replace, patch), no watch paths, JSON and YAML only, every
	// operation naming the custom resource's kind.
	CustomResource
)

// Resource is one (sub)resource path of a group-version, as its
// operations are derived from it.
type Resource struct {
	// Name is the path under the group-version: "configmaps",
	// "services/status".
	Name string
	// Namespaced is the scope (of the parent, for a subresource).
	Namespaced bool
	// Kind is the kind of the objects read and written: a subresource's
	// own (autoscaling/v1 Scale for scale), the resource's for status.
	Kind schema.GroupVersionKind
	// ListKind is the kind of a resource's lists; Kind.Kind+"List" when
	// empty (in Kind's group-version).
	ListKind string
	// Verbs are the discovery verbs served: get, list, watch, create,
	// update, patch, delete, deletecollection. The CustomResource style
	// does not look at them.
	Verbs []string
	// DeleteReturnsObject says DELETE answers with the deleted object
	// rather than a Status (upstream's rest.MayReturnFullObjectDeleter).
	DeleteReturnsObject bool
	// GetOptions, for a resource read with options (upstream's
	// rest.GetterWithOptions: pods/log), is the options object (a
	// versioned API type, e.g. *corev1.PodLogOptions) whose fields are
	// the read's query parameters.
	GetOptions any
	// Produces are media types a read answers in besides the built-in
	// ones, listed first; ProducesString says it answers a string rather
	// than Kind (upstream's rest.StorageMetadata: pods/log, text/plain).
	Produces       []string
	ProducesString bool
	// Connect describes a connecter (upstream's rest.Connecter:
	// pods/exec, services/proxy); nil for other resources. Its
	// operations replace those of its discovery verbs.
	Connect *Connect
}

// Connect is what a connecter serves.
type Connect struct {
	// Methods are the HTTP methods proxied ("GET", "POST", ...).
	Methods []string
	// Options is the options object (a versioned API type, e.g.
	// *corev1.PodExecOptions) whose fields are the query parameters.
	Options any
	// Subpath says the paths below the subresource are served too
	// (pods/{name}/proxy/{path}).
	Subpath bool
}

// ResourcesOf converts a group-version's discovery entries into
// Resources: a subresource entry's group, version and kind are its own
// when set (a scale subresource's autoscaling/v1 Scale).
func ResourcesOf(gv schema.GroupVersion, in []metav1.APIResource) []Resource {
	out := make([]Resource, 0, len(in))
	for _, r := range in {
		gvk := gv.WithKind(r.Kind)
		if r.Version != "" {
			gvk.Group, gvk.Version = r.Group, r.Version
		}
		out = append(out, Resource{Name: r.Name, Namespaced: r.Namespaced, Kind: gvk, Verbs: r.Verbs})
	}
	return out
}

// Media types published (kapi serves no CBOR, which upstream gates off).
var (
	// BuiltinMediaTypes are the response media types of built-in
	// resources; BuiltinStreamMediaTypes those of lists and watches too.
	BuiltinMediaTypes       = []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML, runtime.ContentTypeProtobuf}
	BuiltinStreamMediaTypes = []string{runtime.ContentTypeJSON + ";stream=watch", runtime.ContentTypeProtobuf + ";stream=watch"}
	// BuiltinPatchTypes are the patch types of built-in resources.
	BuiltinPatchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.StrategicMergePatchType), string(types.ApplyYAMLPatchType)}
	// CustomResourceMediaTypes are those of custom resources, which
	// accept no strategic merge patch.
	CustomResourceMediaTypes = []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML}
	CustomResourcePatchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}
)

// PathsConfig says how to build a group-version's operations.
type PathsConfig struct {
	Style Style
	// DefinitionName returns the definition name a kind is published
	// under, false if it has none. Required.
	DefinitionName func(schema.GroupVersionKind) (string, bool)
}

// Paths is the operations of one group-version, ready to be rendered as
// OpenAPI v2 ([Paths.V2]) or v3 ([Paths.V3]). Build one with [BuildPaths].
type Paths struct {
	items map[string]*pathItem
	refs  map[string]bool
	// orderedGVKInV2 writes the operations' group-version-kind in v2 as
	// in v3 (group, version, kind), not sorted: kube-aggregator serves
	// its own group's v2 paths as built, while the other groups' come
	// from the delegate servers' documents, parsed and merged, that
	// object's keys sorted (as kube-apiserver v1.37.2 writes them).
	orderedGVKInV2 bool
}

// pathItem is one path: its operations by lower-case HTTP method, and the
// parameters all of them share (hoisted, as kube-openapi does).
type pathItem struct {
	params []param
	ops    map[string]*operation
}

type operation struct {
	id, description, action, tag string
	gvk                          schema.GroupVersionKind
	params                       []param
	// body is the definition of the request body, "" for none.
	body         string
	bodyRequired bool
	consumes     []string
	produces     []string
	responses    []response
}

type response struct {
	code        int
	description string
	definition  string
	// typ is the JSON type of a response without a definition ("string"
	// for the documents of service-account issuer discovery), "" for no
	// schema.
	typ string
}

var (
	statusName        = NameForObject(&metav1.Status{})
	deleteOptionsName = NameForObject(&metav1.DeleteOptions{})
	patchName         = NameForObject(&metav1.Patch{})
	watchEventName    = NameForObject(&metav1.WatchEvent{})
)

// Definitions returns the names of the definitions the operations
// reference, sorted: the document must define them.
func (p *Paths) Definitions() []string {
	out := make([]string, 0, len(p.refs))
	for n := range p.refs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// PathNames returns the paths, sorted.
func (p *Paths) PathNames() []string {
	out := make([]string, 0, len(p.items))
	for k := range p.items {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BuildPaths returns the operations of gv's resources under cfg's rules.
func BuildPaths(gv schema.GroupVersion, resources []Resource, cfg PathsConfig) (*Paths, error) {
	if cfg.DefinitionName == nil {
		return nil, fmt.Errorf("openapi paths of %s: no DefinitionName", gv)
	}
	b := &pathBuilder{
		gv:    gv,
		cfg:   cfg,
		out:   &Paths{items: map[string]*pathItem{}, refs: map[string]bool{}, orderedGVKInV2: gv.Group == "apiregistration.k8s.io"},
		kinds: map[string]string{},
		root:  rootOf(gv),
		tag:   camelID(groupID(gv.Group), false) + "_" + camelID(gv.Version, false),
	}
	sorted := slices.Clone(resources)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, r := range sorted {
		if !strings.Contains(r.Name, "/") {
			b.kinds[r.Name] = r.Kind.Kind
		}
	}
	for _, r := range sorted {
		if r.Kind.Version == "" {
			r.Kind.Group, r.Kind.Version = gv.Group, gv.Version
		}
		var err error
		switch cfg.Style {
		case CustomResource:
			err = b.customResource(r)
		default:
			err = b.installer(r)
		}
		if err != nil {
			return nil, fmt.Errorf("openapi paths of %s %s: %w", gv, r.Name, err)
		}
	}
	if cfg.Style == Installer {
		b.discovery()
	}
	b.hoist()
	return b.out, nil
}

// discovery adds the group-version root, which lists its resources (an
// APIResourceList), as the installer's discovery route publishes it.
func (b *pathBuilder) discovery() {
	b.add(b.root+"/", "get", &operation{
		id:          "get" + camelID(groupID(b.gv.Group), true) + camelID(b.gv.Version, true) + "APIResources",
		description: "get available resources",
		consumes:    BuiltinMediaTypes, produces: BuiltinMediaTypes,
		responses: []response{
			{200, "OK", b.ref(NameForObject(&metav1.APIResourceList{})), ""},
			{code: 401, description: "Unauthorized"},
		},
	})
}

type pathBuilder struct {
	gv    schema.GroupVersion
	cfg   PathsConfig
	out   *Paths
	kinds map[string]string // main resource -> kind (a subresource's names use its parent's)
	root  string
	tag   string
}

// rootOf is the REST root of a group-version.
func rootOf(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}

// groupID is the group as operation IDs and tags name it: "core" for the
// legacy group, ".k8s.io" trimmed otherwise.
func groupID(group string) string {
	if group == "" {
		return "core"
	}
	return strings.TrimSuffix(group, ".k8s.io")
}

// camelID makes s a valid operation ID part as upstream's
// ToValidOperationID does: letters and '_' kept, digits kept but first,
// any other character dropped and the next letter upper-cased.
func camelID(s string, capitalizeFirst bool) string {
	var sb strings.Builder
	capitalize := capitalizeFirst
	for i, r := range s {
		if unicode.IsLetter(r) || r == '_' || (i != 0 && unicode.IsDigit(r)) {
			if capitalize {
				r = unicode.ToUpper(r)
				capitalize = false
			}
			sb.WriteRune(r)
		} else {
			capitalize = true
		}
	}
	return sb.String()
}

// title upper-cases the first letter of a subresource name, as the
// installer's strings.Title does for these one-word names.
func title(s string) string {
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// operationID turns an installer operation name (verb, scope, kind,
// subresource, suffix: "deletecollectionNamespacedSecret") into upstream's
// operation ID by putting the group and version after the verb:
// "deleteCoreV1CollectionNamespacedSecret". The verb is the shortest of
// upstream's verbs the name starts with, so "deletecollection" splits as
// "delete" + "Collection" (k8s.io/apiserver pkg/endpoints/openapi).
func (b *pathBuilder) operationID(name string) string {
	verb := ""
	for _, v := range []string{"get", "log", "read", "replace", "patch", "delete", "watch", "connect", "proxy", "list", "create"} {
		if strings.HasPrefix(name, v) && (verb == "" || len(v) < len(verb)) {
			verb = v
		}
	}
	rest := name[len(verb):]
	return verb + camelID(groupID(b.gv.Group), true) + camelID(b.gv.Version, true) + camelID(rest, true)
}

// article is upstream's GetArticleForNoun with " " padding: none for a
// plural-looking noun, "a" or "an" otherwise.
func article(noun string) string {
	if !strings.HasSuffix(noun, "ss") && strings.HasSuffix(noun, "s") {
		return " "
	}
	if noun != "" && strings.ContainsRune("aeiouAEIOU", rune(noun[0])) {
		return " an "
	}
	return " a "
}

// definition returns the definition name of gvk, recording the reference.
func (b *pathBuilder) definition(gvk schema.GroupVersionKind) (string, error) {
	name, ok := b.cfg.DefinitionName(gvk)
	if !ok {
		return "", fmt.Errorf("no OpenAPI definition for %v", gvk)
	}
	b.out.refs[name] = true
	return name, nil
}

func (b *pathBuilder) ref(name string) string {
	b.out.refs[name] = true
	return name
}

// add adds op as method at path.
func (b *pathBuilder) add(path, method string, op *operation) {
	item := b.out.items[path]
	if item == nil {
		item = &pathItem{ops: map[string]*operation{}}
		b.out.items[path] = item
	}
	op.tag = b.tag
	item.ops[method] = op
}

func has(verbs []string, v string) bool { return slices.Contains(verbs, v) }

// installer adds a (sub)resource's operations as k8s.io/apiserver's
// installer registers them: collection actions on the resource path,
// item actions on the item path (a subresource's collection actions go
// to its item path too), deprecated watch paths, and, for a namespaced
// resource, list and watch across namespaces.
func (b *pathBuilder) installer(r Resource) error {
	resource, sub, isSub := strings.Cut(r.Name, "/")
	kind := r.Kind.Kind
	if isSub && b.kinds[resource] != "" {
		kind = b.kinds[resource] // names and documentation use the parent's kind
	}
	if r.Connect != nil {
		b.connect(r, kind, sub)
		return nil
	}
	obj, err := b.definition(r.Kind)
	if err != nil {
		return err
	}
	listKind := r.ListKind
	if listKind == "" {
		listKind = r.Kind.Kind + "List"
	}
	canList, canWatch := has(r.Verbs, "list"), has(r.Verbs, "watch")
	var list string
	if canList {
		if list, err = b.definition(r.Kind.GroupVersion().WithKind(listKind)); err != nil {
			return err
		}
	}
	// Status is referenced only by the operations that answer with it:
	// a group of create-only resources (authentication.k8s.io) has none.
	deleted := statusName
	if r.DeleteReturnsObject {
		deleted = obj
	}

	base := resource
	var pathParams []param
	if r.Namespaced {
		base = "namespaces/{namespace}/" + resource
		pathParams = append(pathParams, namespaceParam())
	}
	itemPath := base + "/{name}"
	// The name parameter names the (sub)resource's own kind.
	itemParams := append(slices.Clone(pathParams), nameParam(r.Kind.Kind))
	resourcePath, resourceParams := base, pathParams
	if isSub {
		itemPath += "/" + sub
		resourcePath, resourceParams = itemPath, itemParams
	}
	scope := ""
	if r.Namespaced {
		scope = "Namespaced"
	}
	name := func(verb, suffix string) string { return verb + scope + kind + title(sub) + suffix }
	of := ""
	if isSub {
		of = sub + " of "
	}
	media := BuiltinMediaTypes
	all := append(slices.Clone(BuiltinMediaTypes), BuiltinStreamMediaTypes...)
	gvk := r.Kind
	withParams := func(op *operation, ps ...[]param) *operation {
		op.gvk = gvk
		op.params = append(op.params, prettyParam())
		for _, p := range ps {
			op.params = append(op.params, p...)
		}
		op.responses = append(op.responses, response{code: 401, description: "Unauthorized"})
		return op
	}
	listOp := func(id string, params []param) *operation {
		doc := "list objects of kind " + kind
		if isSub {
			doc = "list " + sub + " of objects of kind " + kind
		}
		if canWatch {
			doc = "list or watch objects of kind " + kind
			if isSub {
				doc = "list or watch " + sub + " of objects of kind " + kind
			}
		}
		return withParams(&operation{
			id: id, description: doc, action: "list",
			consumes: []string{"*/*"}, produces: all,
			responses: []response{{200, "OK", list, ""}},
		}, queryParams("list"), params)
	}
	watchListOp := func(id string, params []param) *operation {
		return withParams(&operation{
			id: id, action: "watchlist",
			description: "watch individual changes to a list of " + of + kind + ". deprecated: use the 'watch' parameter with a list operation instead.",
			consumes:    []string{"*/*"}, produces: all,
			responses: []response{{200, "OK", b.ref(watchEventName), ""}},
		}, queryParams("list"), params)
	}

	if canList {
		b.add(b.root+"/"+resourcePath, "get", listOp(b.operationID(name("list", "")), resourceParams))
	}
	if has(r.Verbs, "create") {
		b.add(b.root+"/"+resourcePath, "post", withParams(&operation{
			id: b.operationID(name("create", "")), action: "post",
			description: "create " + of + strings.TrimPrefix(article(kind), " ") + kind,
			body:        obj, bodyRequired: true,
			consumes: []string{"*/*"}, produces: media,
			responses: []response{{200, "OK", obj, ""}, {201, "Created", obj, ""}, {202, "Accepted", obj, ""}},
		}, queryParams("create"), resourceParams))
	}
	if has(r.Verbs, "deletecollection") {
		doc := "delete collection of " + kind
		if isSub {
			doc = "delete collection of " + sub + " of a " + kind
		}
		b.add(b.root+"/"+resourcePath, "delete", withParams(&operation{
			id: b.operationID(name("deletecollection", "")), action: "deletecollection", description: doc,
			body:     b.ref(deleteOptionsName),
			consumes: []string{"*/*"}, produces: media,
			responses: []response{{200, "OK", b.ref(statusName), ""}},
		}, queryParams("delete"), queryParams("list", "watch", "allowWatchBookmarks"), resourceParams))
	}
	if canWatch && canList {
		b.add(b.root+"/watch/"+resourcePath, "get", watchListOp(b.operationID(name("watch", "List")), resourceParams))
	}
	if has(r.Verbs, "get") {
		doc := "read the specified " + kind
		if isSub {
			doc = "read " + sub + " of the specified " + kind
		}
		read := response{200, "OK", obj, ""}
		if r.ProducesString {
			read = response{200, "OK", "", "string"}
		}
		var options []param
		if r.GetOptions != nil {
			options = objectParams(r.GetOptions)
		}
		b.add(b.root+"/"+itemPath, "get", withParams(&operation{
			id: b.operationID(name("read", "")), action: "get", description: doc,
			consumes: []string{"*/*"}, produces: append(slices.Clone(r.Produces), media...),
			responses: []response{read},
		}, options, itemParams))
	}
	if has(r.Verbs, "update") {
		doc := "replace the specified " + kind
		if isSub {
			doc = "replace " + sub + " of the specified " + kind
		}
		b.add(b.root+"/"+itemPath, "put", withParams(&operation{
			id: b.operationID(name("replace", "")), action: "put", description: doc,
			body: obj, bodyRequired: true,
			consumes: []string{"*/*"}, produces: media,
			responses: []response{{200, "OK", obj, ""}, {201, "Created", obj, ""}},
		}, queryParams("update"), itemParams))
	}
	if has(r.Verbs, "patch") {
		doc := "partially update the specified " + kind
		if isSub {
			doc = "partially update " + sub + " of the specified " + kind
		}
		b.add(b.root+"/"+itemPath, "patch", withParams(&operation{
			id: b.operationID(name("patch", "")), action: "patch", description: doc,
			body: b.ref(patchName), bodyRequired: true,
			consumes: BuiltinPatchTypes, produces: media,
			responses: []response{{200, "OK", obj, ""}, {201, "Created", obj, ""}},
		}, queryParams("patch"), itemParams))
	}
	if has(r.Verbs, "delete") {
		b.add(b.root+"/"+itemPath, "delete", withParams(&operation{
			id: b.operationID(name("delete", "")), action: "delete",
			description: "delete " + of + strings.TrimPrefix(article(kind), " ") + kind,
			body:        b.ref(deleteOptionsName),
			consumes:    []string{"*/*"}, produces: media,
			responses: []response{{200, "OK", b.ref(deleted), ""}, {202, "Accepted", deleted, ""}},
		}, queryParams("delete"), itemParams))
	}
	if canWatch {
		doc := "watch changes to an object of kind " + kind
		if isSub {
			doc = "watch changes to " + sub + " of an object of kind " + kind
		}
		b.add(b.root+"/watch/"+itemPath, "get", withParams(&operation{
			id: b.operationID(name("watch", "")), action: "watch",
			description: doc + ". deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.",
			consumes:    []string{"*/*"}, produces: all,
			responses: []response{{200, "OK", b.ref(watchEventName), ""}},
		}, queryParams("list"), itemParams))
	}
	if r.Namespaced && !isSub {
		allName := func(verb, suffix string) string { return verb + kind + suffix + "ForAllNamespaces" }
		if canList {
			b.add(b.root+"/"+resource, "get", listOp(b.operationID(allName("list", "")), nil))
		}
		if canWatch && canList {
			b.add(b.root+"/watch/"+resource, "get", watchListOp(b.operationID(allName("watch", "List")), nil))
		}
	}
	return nil
}

// connect adds a connecter's operations as the installer does: for each
// method it proxies, a "connect" operation on the item path (and, if it
// serves them, on the paths below it, ".../{path}"), taking the options
// object's fields as query parameters (no "pretty"), answering a string
// in any media type. Upstream's connecters' options kinds are referenced
// by no operation, so their definitions are not published.
func (b *pathBuilder) connect(r Resource, kind, sub string) {
	base := strings.Split(r.Name, "/")[0]
	var params []param
	scope := ""
	if r.Namespaced {
		base = "namespaces/{namespace}/" + base
		params = append(params, namespaceParam())
		scope = "Namespaced"
	}
	itemPath := b.root + "/" + base + "/{name}"
	if sub != "" {
		itemPath += "/" + sub
	}
	// The name parameter names the connecter's own (options) kind.
	params = append(params, nameParam(r.Kind.Kind))
	var options []param
	if r.Connect.Options != nil {
		options = objectParams(r.Connect.Options)
	}
	type variant struct {
		path, suffix string
		params       []param
	}
	variants := []variant{{itemPath, "", params}}
	if r.Connect.Subpath {
		pathParam := param{name: "path", in: inPath, description: "path to the resource", typ: "string", required: true}
		variants = append(variants, variant{itemPath + "/{path}", "WithPath", append(slices.Clone(params), pathParam)})
	}
	for _, v := range variants {
		for _, method := range r.Connect.Methods {
			doc := "connect " + method + " requests to " + kind
			if sub != "" {
				doc = "connect " + method + " requests to " + sub + " of " + kind
			}
			op := &operation{
				id:          b.operationID("connect" + title(strings.ToLower(method)) + scope + kind + title(sub) + v.suffix),
				description: doc, action: "connect", gvk: r.Kind,
				consumes: []string{"*/*"}, produces: []string{"*/*"},
				responses: []response{{200, "OK", "", "string"}, {code: 401, description: "Unauthorized"}},
			}
			op.params = append(append(op.params, options...), v.params...)
			b.add(v.path, strings.ToLower(method), op)
		}
	}
}

// customResource adds a custom resource's operations as
// apiextensions-apiserver's builder does: list (also across namespaces
// when namespaced), create, deletecollection, read, replace, delete and
// patch for the resource; read, replace and patch for its status and
// scale subresources.
func (b *pathBuilder) customResource(r Resource) error {
	resource, sub, isSub := strings.Cut(r.Name, "/")
	if isSub && sub != "status" && sub != "scale" {
		return fmt.Errorf("custom resources have no %q subresource", sub)
	}
	kind := b.kinds[resource]
	if kind == "" {
		return fmt.Errorf("subresource %q without its resource", r.Name)
	}
	// Every operation names the custom resource's kind, the scale
	// subresource's too.
	gvk := b.gv.WithKind(kind)
	obj, err := b.definition(r.Kind)
	if err != nil {
		return err
	}
	base := b.root + "/" + resource
	var pathParams []param
	scope := ""
	if r.Namespaced {
		base = b.root + "/namespaces/{namespace}/" + resource
		pathParams = append(pathParams, namespaceParam())
		scope = "Namespaced"
	}
	itemPath := base + "/{name}"
	itemParams := append(slices.Clone(pathParams), nameParam(kind))
	if isSub {
		itemPath += "/" + sub
	}
	op := func(verb, action, doc string, responses []response, params ...[]param) *operation {
		o := &operation{
			id: b.operationID(verb + scope + kind + title(sub)), action: action, description: doc, gvk: gvk,
			consumes: CustomResourceMediaTypes, produces: CustomResourceMediaTypes,
			responses: append(responses, response{code: 401, description: "Unauthorized"}),
		}
		o.params = append(o.params, prettyParam())
		for _, p := range params {
			o.params = append(o.params, p...)
		}
		return o
	}
	of := ""
	if isSub {
		of = " " + sub + " of"
	}
	ok := []response{{200, "OK", obj, ""}}
	b.add(itemPath, "get", op("read", "get", "read"+of+" the specified "+kind, ok, queryParams("get"), itemParams))
	put := op("replace", "put", "replace"+of+" the specified "+kind, []response{{200, "OK", obj, ""}, {201, "Created", obj, ""}}, queryParams("update"), itemParams)
	put.body, put.bodyRequired = obj, true
	b.add(itemPath, "put", put)
	patch := op("patch", "patch", "partially update"+of+" the specified "+kind, ok, queryParams("patch"), itemParams)
	patch.body, patch.bodyRequired, patch.consumes = b.ref(patchName), true, CustomResourcePatchTypes
	b.add(itemPath, "patch", patch)
	if isSub {
		return nil
	}

	listKind := r.ListKind
	if listKind == "" {
		listKind = kind + "List"
	}
	list, err := b.definition(b.gv.WithKind(listKind))
	if err != nil {
		return err
	}
	status := b.ref(statusName)
	listed := []response{{200, "OK", list, ""}}
	if r.Namespaced {
		all := op("list", "list", "list objects of kind "+kind, listed, queryParams("list"))
		all.id = b.operationID("list" + kind + "ForAllNamespaces")
		b.add(b.root+"/"+resource, "get", all)
	}
	b.add(base, "get", op("list", "list", "list objects of kind "+kind, listed, queryParams("list"), pathParams))
	create := op("create", "post", "create"+article(kind)+kind, []response{{200, "OK", obj, ""}, {201, "Created", obj, ""}, {202, "Accepted", obj, ""}}, queryParams("create"), pathParams)
	create.body, create.bodyRequired = obj, true
	b.add(base, "post", create)
	// The builder gives deletecollection the list options only, and no
	// body.
	b.add(base, "delete", op("deletecollection", "deletecollection", "delete collection of "+kind, []response{{200, "OK", status, ""}}, queryParams("list"), pathParams))
	del := op("delete", "delete", "delete"+article(kind)+kind, []response{{200, "OK", status, ""}, {202, "Accepted", status, ""}}, queryParams("delete"), itemParams)
	del.body = b.ref(deleteOptionsName)
	b.add(itemPath, "delete", del)
	return nil
}

// hoist moves the parameters every operation of a path has (by name and
// location) to the path, as kube-openapi's builders do, and sorts all
// parameters by name.
func (b *pathBuilder) hoist() {
	for _, item := range b.out.items {
		type key struct{ name, in string }
		count := map[key]int{}
		first := map[key]param{}
		for _, op := range item.ops {
			for _, p := range op.params {
				k := key{p.name, p.in}
				count[k]++
				if _, ok := first[k]; !ok {
					first[k] = p
				}
			}
		}
		for k, n := range count {
			if n == len(item.ops) {
				item.params = append(item.params, first[k])
			}
		}
		for _, op := range item.ops {
			op.params = slices.DeleteFunc(op.params, func(p param) bool { return count[key{p.name, p.in}] == len(item.ops) })
			sortParams(op.params)
		}
		sortParams(item.params)
	}
}

func sortParams(ps []param) {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].name != ps[j].name {
			return ps[i].name < ps[j].name
		}
		return ps[i].in < ps[j].in
	})
}
