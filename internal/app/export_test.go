package app

import "k8s.io/client-go/rest"

// LoopbackConfigs returns the server's loopback client configs: over its
// listener (HTTPS) and in-process.
func LoopbackConfigs(c *Config) (network, inProcess *rest.Config, err error) {
	if network, err = c.loopbackClientConfig(); err != nil {
		return nil, nil, err
	}
	inProcess, err = c.inProcessClientConfig(c.inProcess)
	return network, inProcess, err
}

// LoopbackUserAgent is the user agent of kube-apiserver's own loopback
// writes (the RBAC bootstrap's).
var LoopbackUserAgent = loopbackUserAgent
