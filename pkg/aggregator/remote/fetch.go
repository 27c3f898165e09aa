package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// identity is the user a request to a backend is made as, sent in the
// front-proxy headers the backend trusts with the client certificate.
type identity struct {
	user   string
	groups []string
}

// The users kube-aggregator fetches as: aggregated discovery as
// system:kube-aggregator in system:masters; the legacy discovery fallback
// and OpenAPI as system:aggregator, in no group (the backend's
// authentication adds system:authenticated, which RBAC's system:discovery
// role lets read /apis and /openapi).
var (
	discoveryUser  = identity{user: "system:kube-aggregator", groups: []string{"system:masters"}}
	aggregatorUser = identity{user: "system:aggregator"}
)

// errUnreachable marks a request that got no HTTP response (connection
// refused, TLS failure, timeout): other requests to that backend in the
// same round are not tried.
var errUnreachable = errors.New("backend unreachable")

// client sends requests to one backend.
type client struct {
	base    *url.URL
	http    *http.Client
	timeout time.Duration
	limit   int64
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// newClient resolves api's backend.
func (c *Controller) newClient(ctx context.Context, api *apiregistrationv1.APIService) (*client, error) {
	tctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	base, rt, err := c.cfg.Targets.Target(tctx, api)
	if err != nil {
		return nil, fmt.Errorf("%w: resolve %s: %w", errUnreachable, api.Name, err)
	}
	if base == nil || rt == nil {
		return nil, fmt.Errorf("%w: resolve %s: no URL or transport", errUnreachable, api.Name)
	}
	return &client{
		base: base,
		http: &http.Client{
			Transport: rt,
			// A backend's redirect is not followed: it could send the
			// front-proxy headers elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		timeout: c.cfg.Timeout,
		limit:   c.cfg.MaxBodyBytes,
	}, nil
}

// get sends GET ref (a server-relative path, optionally with a query) as
// id, with Accept accept and If-None-Match etag when not empty, and reads
// the whole response within the timeout.
func (cl *client) get(ctx context.Context, ref, accept, etag string, id identity) (*response, error) {
	rel, err := url.Parse(ref)
	if err != nil || rel.Scheme != "" || rel.Host != "" || rel.User != nil || !strings.HasPrefix(rel.Path, "/") {
		return nil, fmt.Errorf("GET %q: not a server-relative path", ref)
	}
	u := *cl.base
	u.Path = strings.TrimSuffix(cl.base.Path, "/") + rel.Path
	u.RawPath = ""
	u.RawQuery = rel.RawQuery
	u.Fragment = ""

	ctx, cancel := context.WithTimeout(ctx, cl.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", rel.Path, err)
	}
	req.Header.Set("Accept", accept)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	req.Header.Set("X-Remote-User", id.user)
	for _, g := range id.groups {
		req.Header.Add("X-Remote-Group", g)
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: GET %s: %w", errUnreachable, rel.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, cl.limit+1))
	if err != nil {
		return nil, fmt.Errorf("%w: GET %s: read body: %w", errUnreachable, rel.Path, err)
	}
	if int64(len(body)) > cl.limit {
		return nil, fmt.Errorf("GET %s: response larger than %d bytes", rel.Path, cl.limit)
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// statusError describes an unexpected response.
func statusError(path string, r *response) error {
	msg := string(r.body)
	if len(msg) > 256 {
		msg = msg[:256] + "..."
	}
	return fmt.Errorf("GET %s: status %d: %s", path, r.status, msg)
}
