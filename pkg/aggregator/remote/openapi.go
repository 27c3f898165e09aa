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
// document. A definition several backends reference is merged by the
// first and removed with the last (reference counted).
type openAPIMerger struct {
	api *server.OpenAPI

	mu   sync.Mutex
	refs map[string]int // definition name -> services that merged it
}

// set replaces what s merged with paths and defs (nil, nil removes it all).
// s is busy, or idle with Controller.mu held.
func (m *openAPIMerger) set(s *service, paths, defs map[string]any) {
	if m.api == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	released := map[string]bool{}
	for _, d := range s.v2Defs {
		m.refs[d]--
		if m.refs[d] <= 0 {
			delete(m.refs, d)
			released[d] = true
		}
	}
	merge := map[string]any{}
	kept := make([]string, 0, len(defs))
	for name, v := range defs {
		if isLocalDefinition(name) || (m.refs[name] == 0 && !released[name] && m.api.HasV2Definition(name)) {
			continue
		}
		if m.refs[name] == 0 {
			merge[name] = v // first (or only) owner: ours is the copy served
		}
		m.refs[name]++
		kept = append(kept, name)
	}
	var removeDefs, removePaths []string
	for d := range released {
		if _, ok := merge[d]; !ok {
			removeDefs = append(removeDefs, d)
		}
	}
	for _, p := range s.v2Paths {
		if _, ok := paths[p]; !ok {
			removePaths = append(removePaths, p)
		}
	}
	if len(paths) > 0 || len(merge) > 0 {
		m.api.MergeV2(paths, merge)
	}
	if len(removePaths) > 0 || len(removeDefs) > 0 {
		m.api.RemoveV2(removePaths, removeDefs)
	}
	s.v2Paths = s.v2Paths[:0]
	for p := range paths {
		s.v2Paths = append(s.v2Paths, p)
	}
	sort.Strings(s.v2Paths)
	sort.Strings(kept)
	s.v2Defs = kept
}

// removeOpenAPI removes everything s added to OpenAPI. s is not busy and
// Controller.mu is held.
func (c *Controller) removeOpenAPI(s *service) {
	if c.cfg.OpenAPI == nil {
		return
	}
	c.oa.set(s, nil, nil)
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
		c.oa.set(s, nil, nil)
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
	paths, defs, err := selectV2(resp.body, v2)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	c.oa.set(s, paths, defs)
	s.v2ETag, s.v2Hash = etag, hash
	return nil
}

// selectV2 decodes an OpenAPI v2 document and returns its paths equal to
// prefix or below it ("<prefix>/..."), and the definitions they reference,
// directly or through other definitions. Numbers keep their exact text.
func selectV2(body []byte, prefix string) (paths, defs map[string]any, err error) {
	var doc struct {
		Paths       map[string]any `json:"paths"`
		Definitions map[string]any `json:"definitions"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("decode openapi v2: %w", err)
	}
	paths = map[string]any{}
	var pending []string
	for k, v := range doc.Paths {
		if k == prefix || strings.HasPrefix(k, prefix+"/") {
			paths[k] = v
			pending = collectRefs(v, pending)
		}
	}
	defs = map[string]any{}
	for len(pending) > 0 {
		name := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if _, done := defs[name]; done {
			continue
		}
		d, ok := doc.Definitions[name]
		if !ok {
			continue
		}
		defs[name] = d
		pending = collectRefs(d, pending)
	}
	return paths, defs, nil
}

// collectRefs appends the definition names of the "$ref":
// "#/definitions/<name>" found anywhere in v.
func collectRefs(v any, out []string) []string {
	stack := []any{v}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch t := cur.(type) {
		case map[string]any:
			for k, e := range t {
				if ref, ok := e.(string); ok && k == "$ref" {
					if name, ok := strings.CutPrefix(ref, "#/definitions/"); ok && name != "" {
						out = append(out, unescapePointer(name))
					}
					continue
				}
				stack = append(stack, e)
			}
		case []any:
			stack = append(stack, t...)
		}
	}
	return out
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
