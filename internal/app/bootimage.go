package app

import "github.com/spf13/pflag"

// perServerFlags are the flags that change nothing of what the post-start
// hooks bootstrap (RBAC policy, priority-and-fairness configuration, local
// APIServices, system PriorityClasses and Namespaces): where the server
// listens and keeps its files, its serving certificate, how it logs,
// times out, shuts down and caches. A command line with any other flag
// set bootstraps from nothing (a judgment kept deliberately narrow: a flag
// missing here only costs start time).
var perServerFlags = map[string]bool{
	"data-dir": true, "admin-kubeconfig": true, "v": true, "storage-backend": true,
	"secure-port": true, "bind-address": true, "advertise-address": true, "cert-dir": true,
	"tls-cert-file": true, "tls-private-key-file": true, "tls-cipher-suites": true, "tls-min-version": true,
	"disable-http2-serving": true, "http2-max-streams-per-connection": true, "goaway-chance": true,
	"request-timeout": true, "min-request-timeout": true, "livez-grace-period": true,
	"shutdown-delay-duration": true, "shutdown-send-retry-after": true, "shutdown-watch-termination-grace-period": true,
	"profiling": true, "contention-profiling": true,
	"watch-cache": true, "watch-cache-sizes": true, "default-watch-cache-size": true, "watch-cache-max-events": true,
	"etcd-compaction-interval":        true,
	"show-hidden-metrics-for-version": true, "disabled-metrics": true, "allow-metric-labels": true,
	"allow-metric-labels-manifest": true,
}

// usesBootstrapImage reports whether the command line (fs, parsed into
// o) starts a memory-backend server of kapi's default options but for
// per-server flags: it then starts from the built-in bootstrap image
// (Options.BootstrapImage); else it bootstraps from nothing. On any other
// backend the storage is not empty at every start, and the hooks' own
// writes are what is wanted.
func usesBootstrapImage(fs *pflag.FlagSet, o *Options) bool {
	if o.Storage.Backend != "memory" {
		return false
	}
	only := true
	fs.Visit(func(f *pflag.Flag) {
		if !perServerFlags[f.Name] {
			only = false
		}
	})
	return only
}
