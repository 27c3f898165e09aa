package app

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"os"
	"strings"

	"github.com/kapi-dev/kapi/pkg/auth/reload"
)

// apiServerID is the server's identity in the reload metrics'
// apiserver_id_hash label, as kube-apiserver's (APIServerIdentity):
// "kube-apiserver-" and the base32 of the first 16 bytes of the SHA-256
// of the host name.
func apiServerID() string {
	host, _ := os.Hostname()
	sum := sha256.Sum256([]byte(host))
	return "kube-apiserver-" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

// startConfigReload watches the --authorization-config and
// --authentication-config files until ctx ends, applying each valid
// change (see package reload). It runs from the rbac/bootstrap-roles
// hook, with the server's lifetime.
func (c *Config) startConfigReload(ctx context.Context) error {
	id := reload.Hash([]byte(apiServerID()))
	watch := func(path, subsystem, what string, loaded []byte, apply func([]byte) error) error {
		m, err := reload.NewMetrics(c.Generic.MetricsRegistry, subsystem, what)
		if err != nil {
			return err
		}
		m.ConfigInfo(id, loaded)
		w := &reload.Watcher{Path: path, Interval: c.Options.ConfigReloadInterval, Apply: apply, Metrics: m, IDHash: id, Logger: c.Logger}
		go w.Run(ctx, loaded)
		return nil
	}
	if f := c.Options.Authorization.ConfigFile; f != "" {
		if d, ok := c.Authorizer.(*dynamicAuthorizer); ok {
			if err := watch(f, "authorization_config_controller", "authorization", d.loaded,
				func(data []byte) error { return c.reloadAuthorization(d, data) }); err != nil {
				return err
			}
		}
	}
	if f := c.Options.Authentication.AuthenticationConfigFile; f != "" && c.authn != nil {
		if err := watch(f, "authentication_config_controller", "authentication", c.authn.loaded, c.reloadAuthentication); err != nil {
			return err
		}
	}
	return nil
}
