package options

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// DefaultServiceAccountIssuer is kapi's --service-account-issuer when none
// is given (kube-apiserver requires the flag; kubeadm sets this value).
const DefaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local"

// AuthenticationOptions are kube-apiserver's authentication flags beyond
// client certificates and front-proxy headers: anonymous requests, static
// tokens and service-account tokens.
type AuthenticationOptions struct {
	// Anonymous is --anonymous-auth: requests without credentials are
	// system:anonymous in system:unauthenticated (true), or 401 (false).
	Anonymous bool
	// TokenAuthFile is --token-auth-file (CSV token,user,uid,"groups").
	TokenAuthFile string
	// APIAudiences is --api-audiences; empty means the first issuer.
	APIAudiences []string

	ServiceAccounts ServiceAccountAuthenticationOptions

	// OIDC are the --oidc-* flags.
	OIDC OIDCOptions
	// AuthenticationConfigFile is --authentication-config (a
	// apiserver.config.k8s.io/v1 AuthenticationConfiguration); it
	// excludes the --oidc-* flags, and --anonymous-auth when it
	// configures anonymous.
	AuthenticationConfigFile string

	// anonymousSet records that --anonymous-auth was given.
	anonymousSet bool
}

// OIDCOptions are the --oidc-* flags.
type OIDCOptions struct {
	IssuerURL      string
	ClientID       string
	CAFile         string
	UsernameClaim  string
	UsernamePrefix string
	GroupsClaim    string
	GroupsPrefix   string
	SigningAlgs    []string
	RequiredClaims map[string]string
}

// set reports whether any --oidc-* flag was given.
func (o *OIDCOptions) set() bool {
	return o.IssuerURL != "" || o.ClientID != "" || o.CAFile != "" || o.UsernameClaim != "sub" || o.UsernamePrefix != "" ||
		o.GroupsClaim != "" || o.GroupsPrefix != "" || len(o.RequiredClaims) > 0 || len(o.SigningAlgs) != 1 || o.SigningAlgs[0] != "RS256"
}

// AnonymousFlagSet reports whether --anonymous-auth was given.
func (o *AuthenticationOptions) AnonymousFlagSet() bool { return o.anonymousSet }

// trackedBool is a bool flag that records being set.
type trackedBool struct {
	v   *bool
	set *bool
}

func (b trackedBool) String() string { return strconv.FormatBool(*b.v) }
func (b trackedBool) Type() string   { return "bool" }
func (b trackedBool) IsBoolFlag() bool {
	return true
}

func (b trackedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*b.v, *b.set = v, true
	return nil
}

// ServiceAccountAuthenticationOptions are the --service-account-* flags.
type ServiceAccountAuthenticationOptions struct {
	// KeyFiles verify tokens; empty means the signing key's public half.
	KeyFiles []string
	// SigningKeyFile signs tokens; empty means the key kapi generates in
	// --cert-dir (sa.key, its public half sa.pub).
	SigningKeyFile string
	// Issuers: the first signs, all are accepted.
	Issuers []string
	// JWKSURI overrides the jwks_uri of the discovery document.
	JWKSURI string
	// MaxExpiration caps TokenRequests (0: no cap).
	MaxExpiration time.Duration
	// ExtendExpiration extends the kubelet's pod tokens to a year.
	ExtendExpiration bool
	// Lookup checks that the objects a token names still exist. kapi
	// always checks (upstream's default); false is refused.
	Lookup bool
}

// NewAuthenticationOptions returns kube-apiserver's defaults (and kapi's
// default issuer).
func NewAuthenticationOptions() *AuthenticationOptions {
	return &AuthenticationOptions{
		Anonymous: true,
		ServiceAccounts: ServiceAccountAuthenticationOptions{
			ExtendExpiration: true,
			Lookup:           true,
		},
		OIDC: OIDCOptions{UsernameClaim: "sub", SigningAlgs: []string{"RS256"}},
	}
}

// AddFlags adds the flags to fs.
func (o *AuthenticationOptions) AddFlags(fs *pflag.FlagSet) {
	fs.Var(trackedBool{&o.Anonymous, &o.anonymousSet}, "anonymous-auth", "Enables anonymous requests to the secure port of the API server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.")
	fs.Lookup("anonymous-auth").NoOptDefVal = "true"
	fs.StringVar(&o.AuthenticationConfigFile, "authentication-config", o.AuthenticationConfigFile, "File with Authentication Configuration to configure the JWT Token authenticator or the anonymous authenticator. This flag is mutually exclusive with the oidc-* flags.")
	oi := &o.OIDC
	fs.StringVar(&oi.IssuerURL, "oidc-issuer-url", oi.IssuerURL, "The URL of the OpenID issuer, only HTTPS scheme will be accepted. If set, it will be used to verify the OIDC JSON Web Token (JWT).")
	fs.StringVar(&oi.ClientID, "oidc-client-id", oi.ClientID, "The client ID for the OpenID Connect client, must be set if oidc-issuer-url is set.")
	fs.StringVar(&oi.CAFile, "oidc-ca-file", oi.CAFile, "If set, the OpenID server's certificate will be verified by one of the authorities in the oidc-ca-file, otherwise the host's root CA set will be used.")
	fs.StringVar(&oi.UsernameClaim, "oidc-username-claim", oi.UsernameClaim, "The OpenID claim to use as the user name. Note that claims other than the default ('sub') is not guaranteed to be unique and immutable. This flag is experimental, please see the authentication documentation for further details.")
	fs.StringVar(&oi.UsernamePrefix, "oidc-username-prefix", oi.UsernamePrefix, "If provided, all usernames will be prefixed with this value. If not provided, username claims other than 'email' are prefixed by the issuer URL to avoid clashes. To skip any prefixing, provide the value '-'.")
	fs.StringVar(&oi.GroupsClaim, "oidc-groups-claim", oi.GroupsClaim, "If provided, the name of a custom OpenID Connect claim for specifying user groups. The claim value is expected to be a string or array of strings. This flag is experimental, please see the authentication documentation for further details.")
	fs.StringVar(&oi.GroupsPrefix, "oidc-groups-prefix", oi.GroupsPrefix, "If provided, all groups will be prefixed with this value to prevent conflicts with other authentication strategies.")
	fs.StringSliceVar(&oi.SigningAlgs, "oidc-signing-algs", oi.SigningAlgs, "Comma-separated list of allowed JOSE asymmetric signing algorithms. JWTs with a supported 'alg' header values are: RS256, RS384, RS512, ES256, ES384, ES512, PS256, PS384, PS512. Values are defined by RFC 7518 https://tools.ietf.org/html/rfc7518#section-3.1.")
	fs.StringToStringVar(&oi.RequiredClaims, "oidc-required-claim", oi.RequiredClaims, "A key=value pair that describes a required claim in the ID Token. If set, the claim is verified to be present in the ID Token with a matching value. Repeat this flag to specify multiple claims.")
	fs.StringVar(&o.TokenAuthFile, "token-auth-file", o.TokenAuthFile, "If set, the file that will be used to secure the secure port of the API server via token authentication.")
	fs.StringSliceVar(&o.APIAudiences, "api-audiences", o.APIAudiences, "Identifiers of the API. The service account token authenticator will validate that tokens used against the API are bound to at least one of these audiences. If the --service-account-issuer flag is configured and this flag is not, this field defaults to a single element list containing the issuer URL.")
	sa := &o.ServiceAccounts
	fs.StringArrayVar(&sa.KeyFiles, "service-account-key-file", sa.KeyFiles, "File containing PEM-encoded x509 RSA or ECDSA private or public keys, used to verify ServiceAccount tokens. The specified file can contain multiple keys, and the flag can be specified multiple times with different files. If unspecified, the public half of the signing key is used.")
	fs.StringVar(&sa.SigningKeyFile, "service-account-signing-key-file", sa.SigningKeyFile, "Path to the file that contains the current private key of the service account token issuer. The issuer will sign issued ID tokens with this private key. If unset, kapi generates one in --cert-dir (sa.key, with its public half in sa.pub).")
	fs.StringArrayVar(&sa.Issuers, "service-account-issuer", sa.Issuers, "Identifier of the service account token issuer. The issuer will assert this identifier in \"iss\" claim of issued tokens. This value is a string or URI. When this flag is specified multiple times, the first is used to generate tokens and all are used to determine which issuers are accepted. (default \""+DefaultServiceAccountIssuer+"\")")
	fs.StringVar(&sa.JWKSURI, "service-account-jwks-uri", sa.JWKSURI, "Overrides the URI for the JSON Web Key Set in the discovery doc served at /.well-known/openid-configuration.")
	fs.DurationVar(&sa.MaxExpiration, "service-account-max-token-expiration", sa.MaxExpiration, "The maximum validity duration of a token created by the service account token issuer. If an otherwise valid TokenRequest with a validity duration larger than this value is requested, a token will be issued with a validity duration of this value.")
	fs.BoolVar(&sa.ExtendExpiration, "service-account-extend-token-expiration", sa.ExtendExpiration, "Turns on projected service account expiration extension during token generation, which helps safe transition from legacy token to bound service account token feature.")
	fs.BoolVar(&sa.Lookup, "service-account-lookup", sa.Lookup, "If true, validate ServiceAccount tokens exist in etcd as part of authentication.")
}

// IssuerList returns the issuers, or the default one.
func (o *AuthenticationOptions) IssuerList() []string {
	if len(o.ServiceAccounts.Issuers) == 0 {
		return []string{DefaultServiceAccountIssuer}
	}
	return o.ServiceAccounts.Issuers
}

// Audiences returns --api-audiences, or the first issuer (upstream's
// default).
func (o *AuthenticationOptions) Audiences() []string {
	if len(o.APIAudiences) > 0 {
		return o.APIAudiences
	}
	return o.IssuerList()[:1]
}

// Validate checks the flags as kube-apiserver does.
func (o *AuthenticationOptions) Validate() []error {
	var errs []error
	sa := o.ServiceAccounts
	for _, f := range []struct{ flag, path string }{{"--token-auth-file", o.TokenAuthFile}, {"--service-account-signing-key-file", sa.SigningKeyFile}} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", f.flag, f.path, errors.Unwrap(err)))
		}
	}
	for _, p := range sa.KeyFiles {
		if _, err := os.Stat(p); err != nil {
			errs = append(errs, fmt.Errorf("--service-account-key-file %q: %w", p, errors.Unwrap(err)))
		}
	}
	seen := map[string]bool{}
	for _, iss := range sa.Issuers {
		if iss == "" {
			errs = append(errs, errors.New("service-account-issuer should not be an empty string"))
			continue
		}
		if seen[iss] {
			errs = append(errs, fmt.Errorf("service-account-issuer %q is already specified", iss))
		}
		seen[iss] = true
		if strings.Contains(iss, ":") {
			if _, err := url.Parse(iss); err != nil {
				errs = append(errs, fmt.Errorf("service-account-issuer %q contained a ':' but was not a valid URL: %w", iss, err))
			}
		}
	}
	if sa.JWKSURI != "" {
		if u, err := url.Parse(sa.JWKSURI); err != nil || u.Scheme != "https" {
			errs = append(errs, errors.New("service-account-jwks-uri requires https scheme"))
		}
	}
	if sa.MaxExpiration != 0 && (sa.MaxExpiration < time.Hour || sa.MaxExpiration > (1<<32)*time.Second) {
		errs = append(errs, errors.New("the service-account-max-token-expiration must be between 1 hour and 2^32 seconds"))
	}
	if !sa.Lookup {
		errs = append(errs, errors.New("--service-account-lookup=false is not supported by kapi: tokens are always checked against the objects they name"))
	}
	if o.AuthenticationConfigFile != "" {
		if o.OIDC.set() {
			errs = append(errs, errors.New("authentication-config file and oidc-* flags are mutually exclusive"))
		}
		if _, err := os.Stat(o.AuthenticationConfigFile); err != nil {
			errs = append(errs, fmt.Errorf("--authentication-config %q: %w", o.AuthenticationConfigFile, errors.Unwrap(err)))
		}
	}
	if oi := o.OIDC; (oi.IssuerURL != "") != (oi.ClientID != "") {
		errs = append(errs, errors.New("oidc-issuer-url and oidc-client-id must be specified together"))
	} else if oi.IssuerURL != "" {
		if u, err := url.Parse(oi.IssuerURL); err != nil || u.Scheme != "https" {
			errs = append(errs, errors.New("oidc-issuer-url must use https scheme"))
		}
	}
	if o.OIDC.CAFile != "" {
		if _, err := os.Stat(o.OIDC.CAFile); err != nil {
			errs = append(errs, fmt.Errorf("--oidc-ca-file %q: %w", o.OIDC.CAFile, errors.Unwrap(err)))
		}
	}
	for _, a := range o.APIAudiences {
		if a == "" {
			errs = append(errs, errors.New("--api-audiences must not contain an empty audience"))
		}
	}
	return errs
}
