package healthz

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
)

// HealthChecker is a named check. Check must be safe for concurrent use: the
// aggregate and single-check handlers call it from request goroutines.
type HealthChecker interface {
	// Name is the check's name: the line label in the aggregate body and the
	// last part of its single-check path (/<ep>/<name>). It may contain
	// slashes ("poststarthook/rbac/bootstrap-roles") and is taken literally.
	Name() string
	// Check returns nil when healthy. The error text is shown only on the
	// single-check path and in the server log, never in the aggregate body.
	Check(req *http.Request) error
}

// GroupedChecker is a check that belongs to a group (health.md 11, 18, 19):
// ?exclude=<group> skips every check of the group, each shown as
// "[+]<name> excluded with <group>: ok".
type GroupedChecker interface {
	HealthChecker
	// Group is the group name; "" means no group.
	Group() string
}

// PingHealthz always passes (health.md 16).
var PingHealthz HealthChecker = ping{}

type ping struct{}

func (ping) Name() string              { return "ping" }
func (ping) Check(*http.Request) error { return nil }

// NamedCheck returns a check called name that runs check.
func NamedCheck(name string, check func(r *http.Request) error) HealthChecker {
	return &namedCheck{name: name, check: check}
}

// NamedGroupedCheck returns a check called name, in group group, that runs
// check.
func NamedGroupedCheck(name, group string, check func(r *http.Request) error) HealthChecker {
	return &groupedCheck{namedCheck: namedCheck{name: name, check: check}, group: group}
}

type namedCheck struct {
	name  string
	check func(r *http.Request) error
}

func (c *namedCheck) Name() string                { return c.name }
func (c *namedCheck) Check(r *http.Request) error { return c.check(r) }

type groupedCheck struct {
	namedCheck
	group string
}

func (c *groupedCheck) Group() string { return c.group }

var (
	_ HealthChecker  = (*namedCheck)(nil)
	_ GroupedChecker = (*groupedCheck)(nil)
)

// errShuttingDown is the shutdown check's failure (health.md 14, 21).
var errShuttingDown = errors.New("process is shutting down")

// NewShutdownCheck returns the readyz-only "shutdown" check (health.md 21):
// it fails with "process is shutting down" once shutdownInitiated is closed.
func NewShutdownCheck(shutdownInitiated <-chan struct{}) HealthChecker {
	return NamedCheck("shutdown", func(*http.Request) error {
		select {
		case <-shutdownInitiated:
			return errShuttingDown
		default:
			return nil
		}
	})
}

// NewInformerSyncCheck returns the readyz-only "informer-sync" check
// (health.md 20). unsynced returns the type names of the started informers
// that have not synced yet; while it is non-empty the check fails with
// "<n> informers not started yet: [<types>]" (upstream's wording).
func NewInformerSyncCheck(unsynced func() []string) HealthChecker {
	return NamedCheck("informer-sync", func(*http.Request) error {
		if names := unsynced(); len(names) > 0 {
			return fmt.Errorf("%d informers not started yet: %v", len(names), names)
		}
		return nil
	})
}

// CacheSyncWaiter is what client-go's SharedInformerFactory offers:
// WaitForCacheSync with a closed channel reports, without blocking, whether
// each started informer has synced.
type CacheSyncWaiter interface {
	WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool
}

// NewCacheSyncCheck adapts a shared informer factory to
// [NewInformerSyncCheck]. Type names are sorted so the message is stable.
func NewCacheSyncCheck(factory CacheSyncWaiter) HealthChecker {
	return NewInformerSyncCheck(func() []string {
		closed := make(chan struct{})
		close(closed)
		var names []string
		for typ, synced := range factory.WaitForCacheSync(closed) {
			if !synced {
				names = append(names, typ.String())
			}
		}
		sort.Strings(names)
		return names
	})
}
