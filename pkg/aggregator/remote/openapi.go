package remote

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/server"
)

// localDefinitionPrefixes name the OpenAPI v2 definitions the servers of
// this chain define themselves (Kubernetes' own API types). A backend's
// definition of the same name is not merged and never removed: the
// chain's own copy is kept. Other names the chain defines (a CRD's
// definitions, say) are recognised by being in the document without a
// remote APIService having merged them.
var localDefinitionPrefixes = []string{
	"io.k8s.api.",
	"io.k8s.apimachinery.",
	"io.k8s.apiextensions-apiserver.",
	"io.k8s.kube-aggregator.",
}

func isLocalDefinition(name string) bool {
	for _, p := range localDefinitionPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// gvPaths returns gv's path prefix in OpenAPI v2 ("/apis/<g>/<v>") and its
// v3 document path ("apis/<g>/<v>").
func gvPaths(gv schema.GroupVersion) (v2, v3 string) {
	if gv.Group == "" {
		return "/api/" + gv.Version, "api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version, "apis/" + gv.Group + "/" + gv.Version
}

// openAPIMerger merges the v2 parts of every remote APIService into one
// document: the paths under each group-version, the definitions and the
// shared parameters ("#/parameters/...", which servers built on
// k8s.io/apiserver use for most query parameters) they reference. A
// definition or parameter several backends reference is merged by the
// first and removed with the last (reference counted).
type openAPIMerger struct {
	api *server.OpenAPI

	mu     sync.Mutex
	refs   map[string]int // definition name -> services that merged it
	params map[string]int // shared parameter name -> services that merged it
}

// v2Part is what one backend contributes to the v2 document.
type v2Part struct {
	paths, defs, params map[string]any
}

// set replaces what s merged with part (the zero part removes it all).
// s is busy, or idle with Controller.mu held.
func (m *openAPIMerger) set(s *service, part v2Part) {
	if m.api == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mergeDefs, removeDefs, keptDefs := m.shared(m.refs, s.v2Defs, part.defs, func(name string) bool {
		return isLocalDefinition(name) || m.api.HasV2Definition(name)
	})
	mergeParams, removeParams, keptParams := m.shared(m.params, s.v2Params, part.params, m.api.HasV2Parameter)
	var removePaths []string
	for _, p := range s.v2Paths {
		if _, ok := part.paths[p]; !ok {
			removePaths = append(removePaths, p)
		}
	}
	if len(mergeParams) > 0 {
		m.api.MergeV2Parameters(mergeParams)
	}
	if len(part.paths) > 0 || len(mergeDefs) > 0 {
		m.api.MergeV2(part.paths, mergeDefs)
	}
	if len(removePaths) > 0 || len(removeDefs) > 0 {
		m.api.RemoveV2(removePaths, removeDefs)
	}
	if len(removeParams) > 0 {
		m.api.RemoveV2Parameters(removeParams)
	}
	s.v2Paths = s.v2Paths[:0]
	for p := range part.paths {
		s.v2Paths = append(s.v2Paths, p)
	}
	sort.Strings(s.v2Paths)
	s.v2Defs, s.v2Params = keptDefs, keptParams
}

// shared applies reference counting to one kind of shared entry
// (definitions or parameters): s held the names old and now brings next.
// It returns the entries to merge (names no other service holds), the
// names to remove (no longer held by anyone) and the names s now holds.
// A name not held by any service that the document has anyway (the
// chain's own, taken reports) is left alone.
func (m *openAPIMerger) shared(refs map[string]int, old []string, next map[string]any, taken func(string) bool) (merge map[string]any, remove, kept []string) {
	released := map[string]bool{}
	for _, n := range old {
		refs[n]--
		if refs[n] <= 0 {
			delete(refs, n)
			released[n] = true
		}
	}
	merge = map[string]any{}
	kept = make([]string, 0, len(next))
	for name, v := range next {
		if refs[name] == 0 && !released[name] && taken(name) {
			continue
		}
		if refs[name] == 0 {
			merge[name] = v // first (or only) owner: ours is the copy served
		}
		refs[name]++
		kept = append(kept, name)
	}
	for n := range released {
		if _, ok := merge[n]; !ok {
			remove = append(remove, n)
		}
	}
	sort.Strings(kept)
	return merge, remove, kept
}

// removeOpenAPI removes everything s added to OpenAPI. s is not busy and
// Controller.mu is held.
func (c *Controller) removeOpenAPI(s *service) {
	if c.cfg.OpenAPI == nil {
		return
	}
	c.oa.set(s, v2Part{})
	if s.v3URL != "" {
		_, v3 := gvPaths(s.gv)
		c.cfg.OpenAPI.SetV3(v3, nil)
		s.v3URL = ""
	}
	s.v2ETag, s.v2Hash, s.v3ETag = "", "", ""
}

// syncV2 fetches the backend's /openapi/v2 and merges s's part of it.
func (c *Controller) syncV2(ctx context.Context, cl *client, s *service) error {
	const path = "/openapi/v2"
	resp, err := cl.get(ctx, path, "application/json", s.v2ETag, aggregatorUser)
	if err != nil {
		return err
	}
	switch resp.status {
	case http.StatusNotModified:
		if s.v2ETag == "" {
			return fmt.Errorf("GET %s: 304 Not Modified without an ETag sent", path)
		}
		return nil
	case http.StatusNotFound:
		// The backend serves no OpenAPI v2.
		c.oa.set(s, v2Part{})
		s.v2ETag, s.v2Hash = "", ""
		return nil
	case http.StatusOK:
	default:
		return statusError(path, resp)
	}
	etag := resp.header.Get("Etag")
	hash := ""
	if etag == "" {
		hash = fmt.Sprintf("%X", sha512.Sum512(resp.body))
		if hash == s.v2Hash {
			return nil
		}
	}
	v2, _ := gvPaths(s.gv)
	part, err := selectV2(resp.body, v2)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	c.oa.set(s, part)
	s.v2ETag, s.v2Hash = etag, hash
	return nil
}

// selectV2 decodes an OpenAPI v2 document and returns its paths equal to
// prefix or below it ("<prefix>/..."), the definitions they reference,
// directly or through other definitions, and the shared parameters they
// reference. Numbers keep their exact text.
func selectV2(body []byte, prefix string) (v2Part, error) {
	var doc struct {
		Paths       map[string]any `json:"paths"`
		Definitions map[string]any `json:"definitions"`
		Parameters  map[string]any `json:"parameters"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return v2Part{}, fmt.Errorf("decode openapi v2: %w", err)
	}
	part := v2Part{paths: map[string]any{}, defs: map[string]any{}, params: map[string]any{}}
	var pending, params []string
	for k, v := range doc.Paths {
		if k == prefix || strings.HasPrefix(k, prefix+"/") {
			part.paths[k] = v
			pending, params = collectRefs(v, pending, params)
		}
	}
	// A shared parameter may reference definitions too (a body's schema).
	for _, name := range params {
		if p, ok := doc.Parameters[name]; ok {
			part.params[name] = p
			pending, _ = collectRefs(p, pending, nil)
		}
	}
	for len(pending) > 0 {
		name := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if _, done := part.defs[name]; done {
			continue
		}
		d, ok := doc.Definitions[name]
		if !ok {
			continue
		}
		part.defs[name] = d
		pending, _ = collectRefs(d, pending, nil)
	}
	return part, nil
}

// collectRefs appends the names of the "$ref": "#/definitions/<name>"
// found anywhere in v to defs, and of the "#/parameters/<name>" to params.
func collectRefs(v any, defs, params []string) ([]string, []string) {
	stack := []any{v}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch t := cur.(type) {
		case map[string]any:
			for k, e := range t {
				if ref, ok := e.(string); ok && k == "$ref" {
					if name, ok := strings.CutPrefix(ref, "#/definitions/"); ok && name != "" {
						defs = append(defs, unescapePointer(name))
					} else if name, ok := strings.CutPrefix(ref, "#/parameters/"); ok && name != "" {
						params = append(params, unescapePointer(name))
					}
					continue
				}
				stack = append(stack, e)
			}
		case []any:
			stack = append(stack, t...)
		}
	}
	return defs, params
}

// unescapePointer undoes JSON pointer escaping in one reference token.
func unescapePointer(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// v3Index is the /openapi/v3 document.
type v3Index struct {
	Paths map[string]struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	} `json:"paths"`
}

// decodeV3Index returns the serverRelativeURL of gvPath in an /openapi/v3
// index, "" when the index does not list it.
func decodeV3Index(body []byte, gvPath string) (string, error) {
	var idx v3Index
	if err := json.Unmarshal(body, &idx); err != nil {
		return "", fmt.Errorf("decode openapi v3 index: %w", err)
	}
	if idx.Paths == nil {
		return "", errors.New("decode openapi v3 index: no paths")
	}
	return idx.Paths[gvPath].ServerRelativeURL, nil
}

// checkV3Document checks that body is one JSON object.
func checkV3Document(body []byte) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return fmt.Errorf("decode openapi v3 document: %w", err)
	}
	if doc == nil {
		return errors.New("decode openapi v3 document: null")
	}
	return nil
}

// syncV3 fetches the backend's /openapi/v3 index and, when the URL (with
// its hash) of s's group-version changed, its document.
func (c *Controller) syncV3(ctx context.Context, cl *client, s *service) error {
	const path = "/openapi/v3"
	_, gvPath := gvPaths(s.gv)
	resp, err := cl.get(ctx, path, "application/json", s.v3ETag, aggregatorUser)
	if err != nil {
		return err
	}
	var ref string
	switch resp.status {
	case http.StatusNotModified:
		if s.v3ETag == "" {
			return fmt.Errorf("GET %s: 304 Not Modified without an ETag sent", path)
		}
		return nil
	case http.StatusNotFound:
		// The backend serves no OpenAPI v3.
	case http.StatusOK:
		if ref, err = decodeV3Index(resp.body, gvPath); err != nil {
			return fmt.Errorf("GET %s: %w", path, err)
		}
	default:
		return statusError(path, resp)
	}
	etag := resp.header.Get("Etag")
	if ref == "" {
		if s.v3URL != "" {
			c.cfg.OpenAPI.SetV3(gvPath, nil)
			s.v3URL = ""
		}
		s.v3ETag = etag
		return nil
	}
	if ref != s.v3URL || !strings.Contains(ref, "?") {
		// Fetched again when its URL changed, or on every round when it
		// carries no hash to tell.
		doc, err := cl.get(ctx, ref, "application/json", "", aggregatorUser)
		if err != nil {
			return err
		}
		if doc.status != http.StatusOK {
			return statusError(ref, doc)
		}
		if err := checkV3Document(doc.body); err != nil {
			return fmt.Errorf("GET %s: %w", ref, err)
		}
		c.cfg.OpenAPI.SetV3(gvPath, doc.body)
		s.v3URL = ref
	}
	s.v3ETag = etag
	return nil
}
