package componentstatus

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// probeTimeout bounds one probe, as upstream's.
const probeTimeout = 20 * time.Second

// maxBodyLength is how much of a probed body is kept as the message
// (upstream's prober reads at most 10 KiB).
const maxBodyLength = 10 * 1024

// Server is one component whose health a get or list reports.
type Server interface {
	// Check probes the component: its condition status (True healthy,
	// False unhealthy, Unknown when the probe itself failed), the message
	// (what the component answered, or why it could not be reached) and
	// the error of a probe that could not be made. It must return within
	// ctx's deadline.
	Check(ctx context.Context) (corev1.ConditionStatus, string, error)
}

// HTTPServer is a component probed with an HTTP GET, as upstream's
// HttpServer: a 2xx answer is healthy (its body is the message), a 3xx
// one that was not followed is Unknown, any other status is unhealthy
// ("HTTP probe failed with statuscode: <code>"), and a request that fails
// is unhealthy with the error as the message.
type HTTPServer struct {
	// URL is probed, e.g. "https://127.0.0.1:10259/healthz".
	URL string
	// TLSConfig is used for https URLs (nil: the default).
	TLSConfig *tls.Config
	// Validate, if set, must accept the body of a healthy answer.
	Validate func(body []byte) error

	client *http.Client
}

// NewHTTPServer returns the HTTPServer probing url; insecure skips the
// verification of the server's certificate (as upstream probes the
// scheduler and the controller manager).
func NewHTTPServer(url string, insecure bool) *HTTPServer {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure} //nolint:gosec // upstream probes these ports without verification
	return &HTTPServer{URL: url, TLSConfig: cfg}
}

// Check implements Server.
func (s *HTTPServer) Check(ctx context.Context) (corev1.ConditionStatus, string, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return corev1.ConditionUnknown, "", fmt.Errorf("failed to construct probe request: %w", err)
	}
	req.Header.Set("Accept", "*/*")
	client := s.client
	if client == nil {
		transport := &http.Transport{TLSClientConfig: s.TLSConfig, DisableKeepAlives: true}
		client = &http.Client{Transport: transport}
		defer transport.CloseIdleConnections()
	}
	res, err := client.Do(req)
	if err != nil {
		// As upstream: a request that fails (refused, timed out) is an
		// unhealthy answer, not a failed probe.
		return corev1.ConditionFalse, err.Error(), nil
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxBodyLength))
	if err != nil {
		return corev1.ConditionFalse, "", err
	}
	body := string(b)
	switch {
	case res.StatusCode >= http.StatusOK && res.StatusCode < http.StatusMultipleChoices:
	case res.StatusCode >= http.StatusMultipleChoices && res.StatusCode < http.StatusBadRequest:
		return corev1.ConditionUnknown, "Probe terminated redirects, Response body: " + body, nil
	default:
		return corev1.ConditionFalse, fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode), nil
	}
	if s.Validate != nil {
		if err := s.Validate(b); err != nil {
			return corev1.ConditionFalse, body, err
		}
	}
	return corev1.ConditionTrue, body, nil
}

// StorageServer is a storage backend (etcd) probed through a health check
// of the storage it serves, as upstream's EtcdServer: "ok" when healthy,
// the check's error otherwise.
type StorageServer struct {
	// Health checks the storage; it must honour ctx.
	Health func(ctx context.Context) error
}

// Check implements Server.
func (s StorageServer) Check(ctx context.Context) (corev1.ConditionStatus, string, error) {
	if s.Health == nil {
		return corev1.ConditionFalse, "", errors.New("no health check")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	if err := s.Health(ctx); err != nil {
		return corev1.ConditionFalse, "", err
	}
	return corev1.ConditionTrue, "ok", nil
}
