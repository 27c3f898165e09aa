package options

import (
	"fmt"
	"slices"

	"github.com/spf13/pflag"
)

// Authorization modes (--authorization-mode).
const (
	ModeAlwaysAllow = "AlwaysAllow"
	ModeAlwaysDeny  = "AlwaysDeny"
	ModeRBAC        = "RBAC"
	ModeNode        = "Node"
	ModeWebhook     = "Webhook"
)

// AuthorizationOptions are the authorization flags.
type AuthorizationOptions struct {
	// Modes is --authorization-mode: the authorizers, in order. kapi's
	// default is RBAC (kube-apiserver's flag default is AlwaysAllow, and
	// clusters set Node,RBAC; kapi has no kubelets, so no Node authorizer
	// by default).
	Modes []string
}

// NewAuthorizationOptions returns kapi's defaults: RBAC.
func NewAuthorizationOptions() *AuthorizationOptions {
	return &AuthorizationOptions{Modes: []string{ModeRBAC}}
}

// AddFlags adds the authorization flags to fs.
func (o *AuthorizationOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVar(&o.Modes, "authorization-mode", o.Modes, "Ordered list of plug-ins to do authorization on secure port. Defaults to RBAC. Comma-delimited list of: AlwaysAllow,AlwaysDeny,RBAC (Node and Webhook are not implemented yet).")
}

// Validate checks the flags: known modes, each once. Node and Webhook are
// refused with the reason (not implemented in kapi yet: Node needs the
// node/pod/volume graph of kubelets, Webhook the SubjectAccessReview client
// and --authorization-webhook-config-file).
func (o *AuthorizationOptions) Validate() []error {
	var errs []error
	if len(o.Modes) == 0 {
		errs = append(errs, fmt.Errorf("at least one authorization-mode must be passed"))
	}
	seen := map[string]bool{}
	for _, m := range o.Modes {
		switch m {
		case ModeAlwaysAllow, ModeAlwaysDeny, ModeRBAC:
		case ModeNode, ModeWebhook:
			errs = append(errs, fmt.Errorf("authorization-mode %q is not implemented by kapi yet", m))
		default:
			errs = append(errs, fmt.Errorf("authorization-mode %q is not a valid mode (valid: %s)", m,
				fmt.Sprint([]string{ModeAlwaysAllow, ModeAlwaysDeny, ModeRBAC})))
		}
		if seen[m] {
			errs = append(errs, fmt.Errorf("authorization-mode %q has mode specified more than once", m))
		}
		seen[m] = true
	}
	return errs
}

// Has reports whether mode is enabled.
func (o *AuthorizationOptions) Has(mode string) bool { return slices.Contains(o.Modes, mode) }
