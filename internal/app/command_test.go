package app_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/app"
)

func TestBadFlagsFailBeforeStarting(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown backend", []string{"--storage-backend=mongo"}, "--storage-backend invalid"},
		{"negative delay", []string{"--shutdown-delay-duration=-1s"}, "--shutdown-delay-duration can not be negative value"},
		{"negative watch grace", []string{"--shutdown-watch-termination-grace-period=-1s"}, "shutdown-watch-termination-grace-period, if provided, can not be a negative value"},
		{"negative request timeout", []string{"--request-timeout=-1s"}, "--request-timeout can not be negative value"},
		{"negative min request timeout", []string{"--min-request-timeout=-1"}, "--min-request-timeout can not be negative value"},
		{"negative inflight", []string{"--max-requests-inflight=-1"}, "--max-requests-inflight can not be negative value"},
		{"negative mutating inflight", []string{"--max-mutating-requests-inflight=-1"}, "--max-mutating-requests-inflight can not be negative value"},
		{"port out of range", []string{"--secure-port=70000"}, "--secure-port 70000 must be between 0 and 65535"},
		{"bad bind address", []string{"--bind-address=nope"}, `--bind-address "nope" is not a valid IP address`},
		{"missing cert file", []string{"--tls-cert-file=" + dir + "/missing.crt", "--tls-private-key-file=" + dir + "/missing.key"}, "--tls-cert-file"},
		{"cert without key", []string{"--tls-cert-file=" + dir + "/x.crt"}, "--tls-cert-file and --tls-private-key-file must be supplied as a pair"},
		{"missing client ca", []string{"--client-ca-file=" + dir + "/ca.crt"}, "--client-ca-file"},
		{"tls version", []string{"--tls-min-version=VersionTLS99"}, `unknown tls version "VersionTLS99"`},
		{"unknown cipher suite", []string{"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_NOPE"}, "--tls-cipher-suites: Cipher suite TLS_NOPE not supported or doesn't exist"},
		{"old tls version", []string{"--tls-min-version=VersionTLS10"}, "--tls-min-version VersionTLS10 is not allowed"},
		{"memory with etcd servers", []string{"--storage-backend=memory", "--etcd-servers=http://127.0.0.1:2379"}, "--etcd-servers can not be set with --storage-backend=memory"},
		{"bad etcd url", []string{"--etcd-servers=::nope"}, "--etcd-servers"},
		{"etcd tls without etcd servers", []string{"--etcd-cafile=" + dir + "/ca.crt"}, "--etcd-cafile, --etcd-certfile and --etcd-keyfile secure the connection to --etcd-servers, which is not set"},
		{"etcd cert without key", []string{"--etcd-servers=https://127.0.0.1:2379", "--etcd-certfile=" + dir + "/c.crt"}, "--etcd-certfile and --etcd-keyfile must be given together"},
		{"missing etcd ca", []string{"--etcd-servers=https://127.0.0.1:2379", "--etcd-cafile=" + dir + "/missing.crt"}, "--etcd-cafile/--etcd-certfile/--etcd-keyfile: "},
		{"missing etcd key pair", []string{"--etcd-servers=https://127.0.0.1:2379", "--etcd-certfile=" + dir + "/c.crt", "--etcd-keyfile=" + dir + "/c.key"}, "--etcd-cafile/--etcd-certfile/--etcd-keyfile: "},
		{"audit policy", []string{"--audit-policy-file=" + dir + "/p.yaml"}, "--audit-policy-file: failed to read file path"},
		{"positional argument", []string{"extra"}, `"kapi" does not take any arguments, got ["extra"]`},
		{"unknown flag", []string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
		// kube-apiserver v1.37.2's message, from the reference binary.
		{"hidden metrics of another version", []string{"--show-hidden-metrics-for-version=1.35"}, `metrics.showHiddenMetricsForVersion: Invalid value: "1.35": must be omitted or have the value '1.36'; only the previous minor version is allowed`},
		{"disabled metric name", []string{"--disabled-metrics=bad-name"}, `metrics.disabledMetrics: Invalid value: ["bad-name"]: must be fully qualified metric names matching "^[a-zA-Z_:][a-zA-Z0-9_:]*$", got "bad-name"`},
		{"allow-list key", []string{"--allow-metric-labels=foo=bar"}, `metrics.allowListMapping: Invalid value: {"foo":"bar"}: must have keys with format`},
		{"allow-list manifest", []string{"--allow-metric-labels-manifest=" + dir + "/none.yaml"}, `metrics.allowListMappingManifest: Invalid value: "` + dir + `/none.yaml": failed to read allow list manifest: open `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := app.NewCommand()
			cmd.SetArgs(append([]string{"--data-dir=" + dir + "/data"}, tt.args...))
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			err := cmd.Execute()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	cmd := app.NewCommand()
	cmd.SetArgs([]string{"version"})
	var out bytes.Buffer
	cmd.SetOut(&out)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "kapi ") || !strings.Contains(out.String(), "Kubernetes API v1.37.") {
		t.Fatalf("got %q", out.String())
	}
}
