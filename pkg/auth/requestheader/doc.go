// Package requestheader authenticates requests forwarded by a trusted
// authenticating proxy, as kube-apiserver's requestheader authenticator
// does: a proxy that presents a client certificate signed by the
// front-proxy CA (and, if configured, with an allowed common name) may name
// the user in headers such as X-Remote-User, X-Remote-Uid, X-Remote-Group
// and X-Remote-Extra-<key>.
//
// [New] builds the receiving side; [SetHeaders] is the sending side, used by
// the aggregator when it proxies a request to an extension API server;
// [AuthenticationConfigMapData] renders the settings the way kube-apiserver
// publishes them in the kube-system/extension-apiserver-authentication
// configmap.
package requestheader
