package app

import (
	"io"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
)

// LoopbackConfigs returns the server's loopback client configs: over its
// listener (HTTPS) and in-process.
func LoopbackConfigs(c *Config) (network, inProcess *rest.Config, err error) {
	if network, err = c.loopbackClientConfig(); err != nil {
		return nil, nil, err
	}
	inProcess, err = c.inProcessClientConfig(c.inProcess)
	return network, inProcess, err
}

// UsesBootstrapImage reports whether the command line args (flags of the
// kapi command) start a server from the built-in bootstrap image.
func UsesBootstrapImage(args []string) (bool, error) {
	o := NewOptions()
	fs := pflag.NewFlagSet("kapi", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return false, err
	}
	return usesBootstrapImage(fs, o), nil
}

// LoopbackUserAgent is the user agent of kube-apiserver's own loopback
// writes (the RBAC bootstrap's).
var LoopbackUserAgent = loopbackUserAgent
