package options

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// ControllerOptions configure the controllers kapi runs in-process in
// kube-controller-manager's stead (garbage collector, default service
// accounts, root CA publisher): which ones run (--controllers) and the
// leader election that makes only one kapi run them when several share
// one etcd. Flag names, syntax and defaults are kube-controller-manager's
// (k8s.io/controller-manager options/generic.go and
// component-base/config/options/leaderelectionconfig.go).
type ControllerOptions struct {
	// Controllers is --controllers: "*" enables every controller that is
	// on by default, "foo" enables foo, "-foo" disables it.
	Controllers []string

	// LeaderElect is --leader-elect.
	LeaderElect bool
	// LeaseDuration, RenewDeadline and RetryPeriod are
	// --leader-elect-lease-duration, -renew-deadline and -retry-period.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// ResourceName and ResourceNamespace name the Lease
	// (--leader-elect-resource-name, --leader-elect-resource-namespace).
	ResourceName      string
	ResourceNamespace string
}

// DefaultLeaderElectionName is the Lease kapi's controllers are elected
// with. It is deliberately not kube-controller-manager's own Lease name:
// a real kube-controller-manager pointed at kapi must not wait forever
// behind kapi's controllers (it runs the controllers kapi does not have).
const DefaultLeaderElectionName = "kapi-controller-manager"

// NewControllerOptions returns kube-controller-manager's defaults (every
// controller on, leader election on with 15s/10s/2s), with kapi's Lease
// name.
func NewControllerOptions() *ControllerOptions {
	return &ControllerOptions{
		Controllers:       []string{"*"},
		LeaderElect:       true,
		LeaseDuration:     15 * time.Second,
		RenewDeadline:     10 * time.Second,
		RetryPeriod:       2 * time.Second,
		ResourceName:      DefaultLeaderElectionName,
		ResourceNamespace: "kube-system",
	}
}

// AddFlags adds the controller flags to fs. all are the known controllers
// (for the help text).
func (o *ControllerOptions) AddFlags(fs *pflag.FlagSet, all []string) {
	fs.StringSliceVar(&o.Controllers, "controllers", o.Controllers, fmt.Sprintf("A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables the controller named 'foo', '-foo' disables the controller named 'foo'.\nAll controllers: %s", strings.Join(all, ", ")))
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Start a leader election client and gain leadership before running the controllers. Enable this when several kapi servers share one etcd, so that only one of them runs the controllers.")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that a leader can be stopped before it is replaced by another candidate. This is only applicable if leader election is enabled.")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", o.RenewDeadline, "The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration. This is only applicable if leader election is enabled.")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", o.RetryPeriod, "The duration the clients should wait between attempting acquisition and renewal of a leadership. This is only applicable if leader election is enabled.")
	fs.StringVar(&o.ResourceName, "leader-elect-resource-name", o.ResourceName, "The name of the Lease object that is used for locking during leader election.")
	fs.StringVar(&o.ResourceNamespace, "leader-elect-resource-namespace", o.ResourceNamespace, "The namespace of the Lease object that is used for locking during leader election.")
}

// Validate checks the flags. all are the known controllers' names and
// aliases maps other accepted names to them (kube-controller-manager
// accepts both, and "-" before either); notRun reports the names of
// kube-controller-manager's controllers that kapi accepts without running
// them.
func (o *ControllerOptions) Validate(all []string, aliases map[string]string, notRun func(string) bool) []error {
	var errs []error
	for _, name := range o.Controllers {
		if name == "*" {
			continue
		}
		bare := strings.TrimPrefix(name, "-")
		canonical := bare
		if c, ok := aliases[bare]; ok {
			canonical = c
		}
		if !slices.Contains(all, canonical) && (notRun == nil || !notRun(bare)) {
			// kube-controller-manager's message.
			errs = append(errs, fmt.Errorf("%q is not in the list of known controllers", bare))
		}
	}
	if !o.LeaderElect {
		return errs
	}
	if o.LeaseDuration <= 0 {
		errs = append(errs, fmt.Errorf("--leader-elect-lease-duration must be greater than zero"))
	}
	if o.RenewDeadline <= 0 {
		errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline must be greater than zero"))
	}
	if o.RetryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("--leader-elect-retry-period must be greater than zero"))
	}
	// client-go's leader election refuses these (leaderelection.NewLeaderElector).
	if o.LeaseDuration > 0 && o.RenewDeadline > 0 && o.LeaseDuration <= o.RenewDeadline {
		errs = append(errs, fmt.Errorf("--leader-elect-lease-duration (%v) must be greater than --leader-elect-renew-deadline (%v)", o.LeaseDuration, o.RenewDeadline))
	}
	if o.RenewDeadline > 0 && o.RetryPeriod > 0 && float64(o.RenewDeadline) <= 1.2*float64(o.RetryPeriod) {
		errs = append(errs, fmt.Errorf("--leader-elect-renew-deadline (%v) must be greater than 1.2 × --leader-elect-retry-period (%v)", o.RenewDeadline, o.RetryPeriod))
	}
	if o.ResourceName == "" {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-name must not be empty"))
	}
	if o.ResourceNamespace == "" {
		errs = append(errs, fmt.Errorf("--leader-elect-resource-namespace must not be empty"))
	}
	return errs
}
