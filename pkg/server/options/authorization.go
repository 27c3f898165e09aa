package options

import (
	"fmt"
	"slices"
	"time"

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
	// ConfigFile is --authorization-config: the structured configuration
	// (pkg/auth/authorizer/config), exclusive with the mode and webhook
	// flags.
	ConfigFile string
	// Modes is --authorization-mode: the authorizers, in order (nil: the
	// default, see EffectiveModes). kapi's default is RBAC (kube-apiserver's
	// flag default is AlwaysAllow, and clusters set Node,RBAC; kapi
	// usually serves no kubelets, so Node is only on when asked for).
	Modes []string
	// Webhook authorizer (--authorization-webhook-*).
	WebhookConfigFile      string
	WebhookVersion         string
	WebhookCacheAuthorized time.Duration
	WebhookCacheDenied     time.Duration
}

// NewAuthorizationOptions returns kapi's defaults (mode RBAC unless
// --authorization-config is given). The webhook's SubjectAccessReview
// version defaults to v1beta1, as kube-apiserver's flag
// (pkg/kubeapiserver/options/authorization.go, v1.37.2).
func NewAuthorizationOptions() *AuthorizationOptions {
	return &AuthorizationOptions{WebhookVersion: "v1beta1",
		WebhookCacheAuthorized: 5 * time.Minute, WebhookCacheDenied: 30 * time.Second}
}

// AddFlags adds the authorization flags to fs.
func (o *AuthorizationOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "authorization-config", o.ConfigFile, "File with Authorization Configuration to configure the authorizer chain. Requires feature gate StructuredAuthorizationConfiguration. This flag is mutually exclusive with the other --authorization-mode and --authorization-webhook-* flags.")
	fs.StringSliceVar(&o.Modes, "authorization-mode", o.Modes, "Ordered list of plug-ins to do authorization on secure port. Defaults to RBAC. Comma-delimited list of: AlwaysAllow,AlwaysDeny,Node,RBAC,Webhook.")
	fs.StringVar(&o.WebhookConfigFile, "authorization-webhook-config-file", o.WebhookConfigFile, "File with webhook configuration in kubeconfig format, used with --authorization-mode=Webhook. The API server will query the remote service to determine access on the API server's secure port.")
	fs.StringVar(&o.WebhookVersion, "authorization-webhook-version", o.WebhookVersion, "The API version of the authorization.k8s.io SubjectAccessReview to send to and expect from the webhook.")
	fs.DurationVar(&o.WebhookCacheAuthorized, "authorization-webhook-cache-authorized-ttl", o.WebhookCacheAuthorized, "The duration to cache 'authorized' responses from the webhook authorizer.")
	fs.DurationVar(&o.WebhookCacheDenied, "authorization-webhook-cache-unauthorized-ttl", o.WebhookCacheDenied, "The duration to cache 'unauthorized' responses from the webhook authorizer.")
}

// Validate checks the flags: known modes, each once; Webhook needs its
// config file.
func (o *AuthorizationOptions) Validate() []error {
	var errs []error
	if o.ConfigFile != "" {
		if o.Modes != nil {
			errs = append(errs, fmt.Errorf("--authorization-config can not be specified when --authorization-mode is specified"))
		}
		if o.WebhookConfigFile != "" {
			errs = append(errs, fmt.Errorf("--authorization-config can not be specified when --authorization-webhook-config-file is specified"))
		}
		return errs
	}
	if o.Modes != nil && len(o.Modes) == 0 {
		errs = append(errs, fmt.Errorf("at least one authorization-mode must be passed"))
	}
	seen := map[string]bool{}
	for _, m := range o.EffectiveModes() {
		switch m {
		case ModeAlwaysAllow, ModeAlwaysDeny, ModeRBAC, ModeNode:
		case ModeWebhook:
			if o.WebhookConfigFile == "" {
				errs = append(errs, fmt.Errorf("authorization-mode Webhook's authorization config file not passed"))
			}
		default:
			errs = append(errs, fmt.Errorf("authorization-mode %q is not a valid mode (valid: %s)", m,
				fmt.Sprint([]string{ModeAlwaysAllow, ModeAlwaysDeny, ModeNode, ModeRBAC, ModeWebhook})))
		}
		if seen[m] {
			errs = append(errs, fmt.Errorf("authorization-mode %q has mode specified more than once", m))
		}
		seen[m] = true
	}
	if o.WebhookConfigFile != "" && !slices.Contains(o.EffectiveModes(), ModeWebhook) {
		errs = append(errs, fmt.Errorf("cannot specify --authorization-webhook-config-file without mode Webhook"))
	}
	if o.WebhookVersion != "v1" && o.WebhookVersion != "v1beta1" {
		errs = append(errs, fmt.Errorf("--authorization-webhook-version %q: must be v1 or v1beta1", o.WebhookVersion))
	}
	return errs
}

// EffectiveModes are the modes given, or RBAC (without
// --authorization-config).
func (o *AuthorizationOptions) EffectiveModes() []string {
	if o.Modes == nil && o.ConfigFile == "" {
		return []string{ModeRBAC}
	}
	return o.Modes
}

// Has reports whether mode is enabled.
func (o *AuthorizationOptions) Has(mode string) bool {
	return slices.Contains(o.EffectiveModes(), mode)
}
