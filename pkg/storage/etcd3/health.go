package etcd3

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultHealthCheckTimeout is the default of --etcd-healthcheck-timeout and
// --etcd-readycheck-timeout.
const DefaultHealthCheckTimeout = 2 * time.Second

// errNotConnected is the check's answer before a client exists.
var errNotConnected = errors.New("etcd client connection not yet established")

// NewHealthCheck returns a probe of etcd for the etcd (healthz, livez) and
// etcd-readiness (readyz) checks: a read of <prefix>/health bounded by
// timeout (0: DefaultHealthCheckTimeout).
//
// client returns the client, or nil while it is not yet connected (the
// check then fails with "etcd client connection not yet established").
// Probes are rate-limited to one per timeout/2: a call inside that window
// gets the result of the last probe sent, without touching etcd. The
// returned function is safe for concurrent use.
func NewHealthCheck(client func() *clientv3.Client, prefix string, timeout time.Duration) func(ctx context.Context) error {
	if timeout <= 0 {
		timeout = DefaultHealthCheckTimeout
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	key := path.Join("/", prefix, "health")
	window := timeout / 2
	// probeMu serializes probes: a caller arriving while a probe is in
	// flight waits for its result instead of getting a stale one (which,
	// before the first probe finished, would be a spurious failure).
	var (
		probeMu   sync.Mutex
		lastStart time.Time
		lastErr   error
	)
	return func(ctx context.Context) error {
		c := client()
		if c == nil {
			return errNotConnected
		}
		probeMu.Lock()
		defer probeMu.Unlock()
		if !lastStart.IsZero() && time.Since(lastStart) < window {
			return lastErr
		}
		lastStart = time.Now()
		pctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		_, err := c.Get(pctx, key)
		if err != nil {
			err = fmt.Errorf("error getting data from etcd: %w", err)
		}
		lastErr = err
		return err
	}
}
