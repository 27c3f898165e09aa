package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/responsewriters"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/options"
)

// The join endpoints, on every clustered server's secure port, in front of
// the handler chain (they authenticate with the join token, not as a
// Kubernetes user):
//
//	GET  /kapi/cluster/ca   the cluster CA certificate (PEM), which the
//	                        joining server checks against the token's hash
//	POST /kapi/cluster/join with "Authorization: Bearer <join token>" and a
//	                        joinRequest: adds the member, answers a
//	                        joinResponse with the shared PKI
const (
	clusterCAPath   = "/kapi/cluster/ca"
	clusterJoinPath = "/kapi/cluster/join"
	// maxJoinRequestBytes bounds a join request body.
	maxJoinRequestBytes = 64 << 10
	// memberAddTimeout bounds the server's wait for etcd to accept a
	// member (it refuses while the cluster is not healthy for 5 s).
	memberAddTimeout = 30 * time.Second
)

// joinRequest is what a joining server sends.
type joinRequest struct {
	Name      string `json:"name"`
	PeerURL   string `json:"peerURL"`
	ClientURL string `json:"clientURL"`
}

// joinResponse is what it receives.
type joinResponse struct {
	// InitialCluster is the membership, this member included, for
	// etcd's initial-cluster with initial-cluster-state=existing.
	InitialCluster string `json:"initialCluster"`
	// ClientURLs are the members' client URLs.
	ClientURLs []string `json:"clientURLs"`
	// Files are the shared PKI files of the cert dir, by name.
	Files map[string][]byte `json:"files"`
}

var membersResource = schema.GroupResource{Group: "kapi.dev", Resource: "etcdmembers"}

// wrapChain puts the join endpoints in front of the handler chain.
func (m *clusterMember) wrapChain(build func(http.Handler, *server.Config) http.Handler, c *Config) func(http.Handler, *server.Config) http.Handler {
	return func(api http.Handler, g *server.Config) http.Handler {
		next := build(api, g)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case clusterCAPath:
				m.serveCA(w, r, c)
			case clusterJoinPath:
				m.serveJoin(w, r, c)
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

func (m *clusterMember) serveCA(w http.ResponseWriter, r *http.Request, c *Config) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		responsewriters.WriteError(w, apierrors.NewMethodNotSupported(membersResource, r.Method))
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.ClusterCA.Raw}))
}

func (m *clusterMember) serveJoin(w http.ResponseWriter, r *http.Request, c *Config) {
	if r.Method != http.MethodPost {
		responsewriters.WriteError(w, apierrors.NewMethodNotSupported(membersResource, r.Method))
		return
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	// Hashes compare in constant time whatever the lengths.
	want, have := sha256.Sum256([]byte(m.token)), sha256.Sum256([]byte(strings.TrimSpace(got)))
	if !ok || m.token == "" || subtle.ConstantTimeCompare(want[:], have[:]) != 1 {
		m.logger.Warn("refused a join request: missing or wrong join token", "remote", r.RemoteAddr)
		responsewriters.WriteError(w, apierrors.NewUnauthorized("a valid join token is required to join the cluster"))
		return
	}
	var req joinRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJoinRequestBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		responsewriters.WriteError(w, apierrors.NewBadRequest("join request: "+err.Error()))
		return
	}
	if err := req.validate(); err != nil {
		responsewriters.WriteError(w, apierrors.NewBadRequest("join request: "+err.Error()))
		return
	}
	files, err := readSharedPKI(m.certDir)
	if err != nil {
		responsewriters.WriteError(w, apierrors.NewInternalError(fmt.Errorf("read the cluster PKI: %w", err)))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), memberAddTimeout)
	defer cancel()
	initial, clientURLs, err := addMember(ctx, c.storage.client, req)
	if err != nil {
		m.logger.Warn("join request failed", "member", req.Name, "peerURL", req.PeerURL, "err", err)
		responsewriters.WriteError(w, err)
		return
	}
	m.logger.Info("added an etcd member", "member", req.Name, "peerURL", req.PeerURL, "remote", r.RemoteAddr)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(joinResponse{InitialCluster: initial, ClientURLs: clientURLs, Files: files})
}

func (r joinRequest) validate() error {
	if r.Name == "" || len(r.Name) > 253 || strings.ContainsAny(r.Name, "=, \t\r\n") {
		return fmt.Errorf("name %q must be 1-253 characters without '=', ',' or spaces", r.Name)
	}
	for _, u := range []struct{ field, v string }{{"peerURL", r.PeerURL}, {"clientURL", r.ClientURL}} {
		p, err := url.Parse(u.v)
		if err != nil || p.Scheme != "https" || p.Port() == "" || p.Hostname() == "" || (p.Path != "" && p.Path != "/") {
			return fmt.Errorf("%s %q is not an https://host:port URL", u.field, u.v)
		}
	}
	return nil
}

// addMember adds the member to etcd as a learner (or finds it added by an
// earlier attempt of the same join that did not complete) and returns the
// membership to start it with. Errors are API status errors.
//
// The member is added as a learner: it does not count for the quorum
// until it caught up and promoted itself (promoteSelf). Added as a voter,
// a second member would take the first one's quorum away until it runs.
func addMember(ctx context.Context, cli *clientv3.Client, req joinRequest) (initial string, clientURLs []string, err error) {
	for {
		// This member's view, without a quorum: after a join whose answer
		// was lost, the cluster may lack one until the joiner starts, and
		// the joiner only starts once it has the answer.
		list, err := cli.MemberList(ctx, clientv3.WithSerializable())
		if err != nil {
			return "", nil, unavailable("list the etcd members", err)
		}
		for _, mem := range list.Members {
			samePeer := slices.Contains(mem.PeerURLs, req.PeerURL)
			switch {
			case samePeer && mem.Name == "":
				// Added before, never started: the same join again.
				return initialCluster(list.Members, mem.ID, req)
			case samePeer:
				return "", nil, apierrors.NewConflict(membersResource, req.Name, fmt.Errorf("member %s (%x) already has peer URL %s; remove it first (kapi etcd member remove %s)", mem.Name, mem.ID, req.PeerURL, mem.Name))
			case mem.Name == req.Name:
				return "", nil, apierrors.NewAlreadyExists(membersResource, req.Name)
			case mem.Name == "":
				// etcd takes one learner at a time, and an unstarted
				// voter keeps the quorum short.
				return "", nil, apierrors.NewConflict(membersResource, req.Name, fmt.Errorf("member %x (%v) was added but has not started: start it or remove it (kapi etcd member remove %x) before another joins", mem.ID, mem.PeerURLs, mem.ID))
			}
		}
		// Each attempt is bounded: etcd drops a configuration change
		// proposed while another is not applied yet (a removal just
		// before), and the call then waits for its whole context.
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		resp, err := cli.MemberAddAsLearner(attempt, []string{req.PeerURL})
		cancel()
		if err == nil {
			return initialCluster(resp.Members, resp.Member.ID, req)
		}
		// Retried: etcd refuses a member while the cluster is not healthy
		// (StrictReconfigCheck: members recently connected, or one down)
		// and a second learner while one is not promoted yet; an attempt
		// that timed out may have added the member after all, which the
		// list above finds.
		select {
		case <-ctx.Done():
			return "", nil, unavailable("add the etcd member", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// initialCluster is the membership a new member starts with.
func initialCluster(members []*etcdserverpb.Member, id uint64, req joinRequest) (string, []string, error) {
	var parts, clientURLs []string
	for _, mem := range members {
		name := mem.Name
		if mem.ID == id {
			name = req.Name
		} else if name == "" {
			return "", nil, apierrors.NewConflict(membersResource, req.Name, fmt.Errorf("member %x (%v) was added but has not started: start it or remove it (kapi etcd member remove %x) before another joins", mem.ID, mem.PeerURLs, mem.ID))
		}
		for _, u := range mem.PeerURLs {
			parts = append(parts, name+"="+u)
		}
		for _, u := range mem.ClientURLs {
			if !slices.Contains(clientURLs, u) {
				clientURLs = append(clientURLs, u)
			}
		}
	}
	if !slices.Contains(clientURLs, req.ClientURL) {
		clientURLs = append(clientURLs, req.ClientURL)
	}
	return strings.Join(parts, ","), clientURLs, nil
}

func unavailable(what string, err error) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf("%s: %v", what, err))
}

// requestJoin asks the server at joinURL to add this server as a member.
// It first fetches the cluster CA without credentials and checks it against
// the token's CA hash; the token is only sent over a connection whose
// server certificate that CA signed. Connection failures and 503s are
// retried until ctx ends (the first server may still be starting).
func requestJoin(ctx context.Context, joinURL string, tok options.JoinToken, req joinRequest, logger *slog.Logger) (*joinResponse, error) {
	base := strings.TrimSuffix(joinURL, "/")
	// Nothing secret travels on this connection: what it returns is
	// checked against the hash in the token.
	unverified := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}, //nolint:gosec // pinned below by the token's CA hash
	}}
	defer unverified.CloseIdleConnections()
	var caPEM []byte
	err := retry(ctx, logger, "fetch the cluster CA", func() (bool, error) {
		body, code, err := do(ctx, unverified, http.MethodGet, base+clusterCAPath, nil, "")
		if err != nil {
			return true, err
		}
		if code != http.StatusOK {
			return code >= 500, fmt.Errorf("GET %s: %d %s", clusterCAPath, code, statusMessage(body))
		}
		caPEM = body
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(caPEM)
	if block == nil {
		return nil, fmt.Errorf("GET %s: not a PEM certificate", clusterCAPath)
	}
	if sha256.Sum256(block.Bytes) != tok.CAHash {
		return nil, errors.New("the server's cluster CA does not match the CA hash in the join token: wrong server or wrong token")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("cluster CA: %w", err)
	}
	pinned := &http.Client{Timeout: memberAddTimeout + 10*time.Second, Transport: &http.Transport{TLSClientConfig: pinnedTLS(ca)}}
	defer pinned.CloseIdleConnections()
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var resp joinResponse
	err = retry(ctx, logger, "join", func() (bool, error) {
		out, code, err := do(ctx, pinned, http.MethodPost, base+clusterJoinPath, body, tok.String())
		if err != nil {
			return true, err
		}
		if code != http.StatusOK {
			return code >= 500, fmt.Errorf("POST %s: %d %s", clusterJoinPath, code, statusMessage(out))
		}
		return false, json.Unmarshal(out, &resp)
	})
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

// pinnedTLS verifies the server's certificate chain against ca alone. The
// host name is not checked: the pinned CA identifies the cluster, and a
// server may be joined through any of its addresses.
func pinnedTLS(ca *x509.Certificate) *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return &tls.Config{
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // VerifyConnection verifies the chain
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the server sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			if err != nil {
				return fmt.Errorf("the server's certificate is not signed by the cluster CA of the join token: %w", err)
			}
			return nil
		},
	}
}

func do(ctx context.Context, client *http.Client, method, u string, body []byte, token string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return out, resp.StatusCode, err
}

// statusMessage is the message of a Status body (or the body).
func statusMessage(body []byte) string {
	var s metav1.Status
	if json.Unmarshal(body, &s) == nil && s.Message != "" {
		return s.Message
	}
	if len(body) > 200 {
		body = body[:200]
	}
	return strings.TrimSpace(string(body))
}

// retry runs fn until it succeeds, fails for good (fn says not to retry),
// or ctx ends.
func retry(ctx context.Context, logger *slog.Logger, what string, fn func() (retry bool, err error)) error {
	delay := 250 * time.Millisecond
	warned := time.Now()
	for {
		again, err := fn()
		if err == nil || !again {
			return err
		}
		if time.Since(warned) > 5*time.Second {
			logger.Info("retrying", "action", what, "err", err)
			warned = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (gave up: %w)", what, err, context.Cause(ctx))
		case <-time.After(delay):
		}
		delay = min(delay*2, 2*time.Second)
	}
}
