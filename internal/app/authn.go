package app

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/oidc"
	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/auth/tokencache"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	saregistry "github.com/kapi-dev/kapi/pkg/controlplane/registry/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
)

// authentication is what the authenticators need beyond the request
// chain: the token authenticators (TokenReview asks them), the
// service-account token issuer and issuer discovery.
type authentication struct {
	// tokens are the bearer-token authenticators in upstream's order:
	// the loopback token, --token-auth-file, service-account tokens.
	tokens    authenticator.Token
	audiences []string
	issuer    *serviceaccount.Issuer
	discovery *serviceaccount.Discovery
	// objects reads what service-account tokens name, once the core
	// server is installed.
	objects lazyObjects
	// jwt are the JWT authenticators of --authentication-config (or the
	// --oidc-* flags), replaced when the file changes; loaded is the
	// file content they were built from.
	jwt    atomic.Pointer[authenticator.Token]
	loaded []byte
}

// applyAuthentication builds c.Authenticator (upstream's order:
// front-proxy headers, client certificates, bearer tokens; then anonymous)
// and c.authn.
func (c *Config) applyAuthentication(frontProxy authenticator.Request, clientCA *x509.CertPool, loopbackToken string) error {
	o := c.Options.Authentication
	a := &authentication{audiences: o.Audiences()}
	static := map[string]*user.Info{}
	if o.TokenAuthFile != "" {
		var err error
		if static, err = authenticator.LoadTokenFile(o.TokenAuthFile, c.Logger); err != nil {
			return fmt.Errorf("--token-auth-file: %w", err)
		}
	}
	sa := o.ServiceAccounts
	var signingKey crypto.Signer
	if sa.SigningKeyFile != "" {
		k, err := serviceaccount.LoadPrivateKeyFile(sa.SigningKeyFile)
		if err != nil {
			return fmt.Errorf("--service-account-signing-key-file: %w", err)
		}
		signingKey = k
	} else {
		const what = "service account key in --cert-dir"
		k, path, err := serviceaccount.EnsureGeneratedKeyDeferred(c.Options.SecureServing.CertDir, c.deferFile(what, nil))
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		signingKey = k
		c.Logger.Info("using generated service account signing key", "path", path)
	}
	signer, err := serviceaccount.NewSigner(signingKey)
	if err != nil {
		return fmt.Errorf("service account signing key: %w", err)
	}
	keys, err := serviceaccount.LoadPublicKeyFiles(sa.KeyFiles)
	if err != nil {
		return fmt.Errorf("--service-account-key-file: %w", err)
	}
	// The signing key's public half always verifies: without it the
	// tokens this server issues would not authenticate here (upstream
	// defaults --service-account-key-file to the signing key file).
	keys = append([]crypto.PublicKey{signer.Public()}, keys...)
	issuers := o.IssuerList()
	a.issuer = serviceaccount.NewIssuer(signer, issuers[0])
	if d, err := serviceaccount.NewDiscovery(issuers[0], sa.JWKSURI, keys); err == nil {
		a.discovery = d
	} else {
		c.Logger.Info("service account issuer discovery is not served", "reason", err)
	}
	jwts, anonymous, loaded, err := c.jwtAuthenticators()
	if err != nil {
		return err
	}
	a.loaded = loaded
	a.setJWT(jwts)
	// Static tokens, the loopback token and OIDC tokens are not bound to
	// the API server's audiences (upstream wraps them the same way).
	loopback := authenticator.AudienceAgnostic(a.audiences, authenticator.NewStaticTokens(map[string]*user.Info{
		loopbackToken: {Name: user.APIServerUser, Groups: []string{user.SystemPrivileged}},
	}))
	saTokens := serviceaccount.NewAuthenticator(issuers, true, keys, a.audiences, &a.objects)
	// Legacy tokens' Secrets are labelled with the day they were last
	// used, through the loopback client as upstream's; the token usage
	// counters are served from the start.
	saMetrics, err := serviceaccount.NewMetrics(c.Generic.MetricsRegistry)
	if err != nil {
		return err
	}
	saTokens.TrackLegacyTokens(&loopbackSecrets{c: c}, saMetrics, c.Logger)
	tokens := []authenticator.Token{
		authenticator.AudienceAgnostic(a.audiences, authenticator.NewStaticTokens(static)),
		saTokens,
	}
	tokens = append(tokens, authenticator.TokenFunc(func(ctx context.Context, token string) (*user.Info, []string, bool, error) {
		return (*a.jwt.Load()).AuthenticateToken(ctx, token)
	}))
	cached, err := c.tokenCache(authenticator.UnionToken(tokens...))
	if err != nil {
		return err
	}
	// The loopback token is tried first and outside the cache, as
	// upstream's AuthorizeClientBearerToken puts its own token
	// authenticator in front of the configured (cached) ones.
	a.tokens = authenticator.UnionToken(loopback, cached)
	c.authn = a
	c.Authenticator = authenticator.Union(
		frontProxy,
		authenticator.NewX509(clientCA),
		authenticator.BearerRequest(a.tokens),
	)
	if !anonymous.enabled || len(anonymous.paths) > 0 {
		c.Authenticator = withAnonymousLimits(c.Authenticator, anonymous)
	}
	return nil
}

// tokenCache wraps the union of the bearer-token authenticators in
// upstream's token cache (k8s.io/kubernetes
// pkg/kubeapiserver/authenticator/config.go, v1.37.2: errors cached as
// failures, a success kept 10 s, a failure not kept), with its metrics.
// A token that stops being valid (its ServiceAccount or Secret deleted,
// its Secret marked invalid) so authenticates for up to 10 s more, and
// the legacy-token tracking runs once per cache fill.
func (c *Config) tokenCache(union authenticator.Token) (authenticator.Token, error) {
	ttl := c.Options.TokenSuccessCacheTTL
	if ttl == 0 {
		ttl = tokencache.DefaultSuccessTTL
	}
	if ttl < 0 {
		return union, nil
	}
	m, err := tokencache.NewMetrics(c.Generic.MetricsRegistry)
	if err != nil {
		return nil, err
	}
	return tokencache.New(union, tokencache.Config{
		SuccessTTL:  ttl,
		FailureTTL:  tokencache.DefaultFailureTTL,
		CacheErrors: true,
		Now:         c.Options.TokenCacheNow,
		Metrics:     m,
		Logger:      c.Logger,
	}), nil
}

// anonymousConfig is who may be anonymous: nobody (disabled), everybody
// (enabled, no paths), or requests for the paths listed.
type anonymousConfig struct {
	enabled bool
	paths   []string
}

// setJWT puts jwts in force (not bound to the API server's audiences,
// as upstream wraps them).
func (a *authentication) setJWT(jwts []*oidc.Authenticator) {
	var list []authenticator.Token
	for _, j := range jwts {
		list = append(list, authenticator.AudienceAgnostic(a.audiences, j))
	}
	t := authenticator.UnionToken(list...)
	a.jwt.Store(&t)
}

// configJWTs builds the JWT authenticators of an --authentication-config.
func configJWTs(cfg *oidc.AuthenticationConfiguration) ([]*oidc.Authenticator, error) {
	var out []*oidc.Authenticator
	for i, j := range cfg.JWT {
		a, err := oidc.New(j, nil)
		if err != nil {
			return nil, fmt.Errorf("--authentication-config: jwt[%d]: %w", i, err)
		}
		out = append(out, a)
	}
	return out, nil
}

// reloadAuthentication puts in force the JWT authenticators of a changed
// --authentication-config; an invalid content changes nothing. kapi
// applies the jwt list only: a change of the anonymous section is
// validated but needs a restart (its filter is built once).
func (c *Config) reloadAuthentication(data []byte) error {
	cfg, err := oidc.ParseConfig(c.Options.Authentication.AuthenticationConfigFile, data)
	if err != nil {
		return fmt.Errorf("--authentication-config: %w", err)
	}
	jwts, err := configJWTs(cfg)
	if err != nil {
		return err
	}
	c.authn.setJWT(jwts)
	return nil
}

// jwtAuthenticators builds the OIDC authenticators of --authentication-config
// or the --oidc-* flags, and the anonymous configuration; loaded is the
// file content (nil without a file).
func (c *Config) jwtAuthenticators() ([]*oidc.Authenticator, anonymousConfig, []byte, error) {
	o := c.Options.Authentication
	anonymous := anonymousConfig{enabled: o.Anonymous}
	var out []*oidc.Authenticator
	var loaded []byte
	switch {
	case o.AuthenticationConfigFile != "":
		data, err := os.ReadFile(o.AuthenticationConfigFile)
		if err != nil {
			return nil, anonymous, nil, fmt.Errorf("--authentication-config: %w", err)
		}
		cfg, err := oidc.ParseConfig(o.AuthenticationConfigFile, data)
		if err != nil {
			return nil, anonymous, nil, fmt.Errorf("--authentication-config: %w", err)
		}
		if out, err = configJWTs(cfg); err != nil {
			return nil, anonymous, nil, err
		}
		loaded = data
		if cfg.Anonymous != nil {
			if o.AnonymousFlagSet() {
				return nil, anonymous, nil, errors.New("--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file")
			}
			anonymous = anonymousConfig{enabled: cfg.Anonymous.Enabled}
			for _, cond := range cfg.Anonymous.Conditions {
				anonymous.paths = append(anonymous.paths, cond.Path)
			}
		}
	case o.OIDC.IssuerURL != "":
		oi := o.OIDC
		j, err := oidc.FromFlags(oidc.FlagOptions{
			IssuerURL: oi.IssuerURL, ClientID: oi.ClientID, CAFile: oi.CAFile,
			UsernameClaim: oi.UsernameClaim, UsernamePrefix: oi.UsernamePrefix,
			GroupsClaim: oi.GroupsClaim, GroupsPrefix: oi.GroupsPrefix,
			SigningAlgs: oi.SigningAlgs, RequiredClaims: oi.RequiredClaims,
		})
		if err != nil {
			return nil, anonymous, nil, err
		}
		a, err := oidc.New(j, oi.SigningAlgs)
		if err != nil {
			return nil, anonymous, nil, fmt.Errorf("--oidc-*: %w", err)
		}
		out = append(out, a)
	}
	return out, anonymous, loaded, nil
}

// errAnonymousDisabled answers a request without credentials when
// anonymous requests are not allowed (--anonymous-auth=false, or a path
// the configuration's anonymous conditions do not list): the filter
// answers 401, as upstream does when no authenticator (and no anonymous
// one) accepts a request.
var errAnonymousDisabled = filters.ErrNoCredentials

func withAnonymousLimits(a authenticator.Request, anonymous anonymousConfig) authenticator.Request {
	return authenticator.RequestFunc(func(r *http.Request) (*user.Info, bool, error) {
		u, ok, err := a.AuthenticateRequest(r)
		if err == nil && !ok && (!anonymous.enabled || (len(anonymous.paths) > 0 && !slices.Contains(anonymous.paths, r.URL.Path))) {
			return nil, false, errAnonymousDisabled
		}
		return u, ok, err
	})
}

// tokenConfig is the TokenRequest configuration of the core server.
func (a *authentication) tokenConfig(c *Config) *saregistry.TokenConfig {
	sa := c.Options.Authentication.ServiceAccounts
	return &saregistry.TokenConfig{
		Issuer:           a.issuer,
		APIAudiences:     a.audiences,
		MaxExpiration:    sa.MaxExpiration,
		ExtendExpiration: sa.ExtendExpiration,
	}
}

// installDiscovery serves service-account issuer discovery on s, and
// reports whether it does. Who may read it is the authorizer's decision
// (upstream grants it to system:service-account-issuer-discovery).
func (a *authentication) installDiscovery(s *server.GenericServer) bool {
	if a.discovery == nil {
		return false
	}
	s.Handler().NonRESTMux.Handle(serviceaccount.OpenIDConfigurationPath, a.discovery.ConfigurationHandler())
	s.Handler().NonRESTMux.Handle(serviceaccount.JWKSPath, a.discovery.JWKSHandler())
	return true
}

// lazyObjects is a serviceaccount.Getter whose reader is set once the core
// server is installed; before that (no request is served yet) it fails.
type lazyObjects struct {
	g atomic.Pointer[serviceaccount.Getter]
}

var _ serviceaccount.Getter = (*lazyObjects)(nil)

func (l *lazyObjects) set(g serviceaccount.Getter) { l.g.Store(&g) }

func (l *lazyObjects) get() (serviceaccount.Getter, error) {
	g := l.g.Load()
	if g == nil {
		return nil, apierrors.NewServiceUnavailable("service accounts are not served yet")
	}
	return *g, nil
}

func (l *lazyObjects) GetServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	g, err := l.get()
	if err != nil {
		return nil, err
	}
	return g.GetServiceAccount(ctx, namespace, name)
}

func (l *lazyObjects) GetSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	g, err := l.get()
	if err != nil {
		return nil, err
	}
	return g.GetSecret(ctx, namespace, name)
}

func (l *lazyObjects) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	g, err := l.get()
	if err != nil {
		return nil, err
	}
	return g.GetPod(ctx, namespace, name)
}

func (l *lazyObjects) GetNode(ctx context.Context, name string) (*corev1.Node, error) {
	g, err := l.get()
	if err != nil {
		return nil, err
	}
	return g.GetNode(ctx, name)
}
