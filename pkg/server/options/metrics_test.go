package options

import (
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
)

// TestShowHiddenMetricsForVersion: only the previous minor is accepted,
// with kube-apiserver v1.37.2's message (seen from the reference binary).
func TestShowHiddenMetricsForVersion(t *testing.T) {
	for _, c := range []struct {
		arg, err string
		show     bool
	}{
		{arg: "", show: false},
		{arg: "1.36", show: true},
		{arg: "1.35", err: `metrics.showHiddenMetricsForVersion: Invalid value: "1.35": must be omitted or have the value '1.36'; only the previous minor version is allowed`},
		{arg: "1.37", err: `metrics.showHiddenMetricsForVersion: Invalid value: "1.37": must be omitted or have the value '1.36'; only the previous minor version is allowed`},
		{arg: "foo", err: `metrics.showHiddenMetricsForVersion: Invalid value: "foo": must be omitted or have the value '1.36'; only the previous minor version is allowed`},
	} {
		o := NewMetricsOptions()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse([]string{"--show-hidden-metrics-for-version=" + c.arg}); err != nil {
			t.Fatal(err)
		}
		errs := o.Validate()
		switch {
		case c.err == "" && len(errs) != 0:
			t.Errorf("%q: got %v, want no error", c.arg, errs)
		case c.err != "" && (len(errs) != 1 || errs[0].Error() != c.err):
			t.Errorf("%q: got %v, want %q", c.arg, errs, c.err)
		case c.err == "" && o.ShowHidden() != c.show:
			t.Errorf("%q: ShowHidden %v, want %v", c.arg, o.ShowHidden(), c.show)
		}
	}
}

// TestMetricsFilterFlags: --disabled-metrics, --allow-metric-labels and
// --allow-metric-labels-manifest are validated as kube-apiserver v1.37.2
// validates them, with its messages (seen from the reference binary).
func TestMetricsFilterFlags(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := file("ok.yaml", "\"etcd_requests_total,operation\": \"create,get\"\n")
	badYAML := file("bad.yaml", "foo: [\n")
	badKey := file("badkey.yaml", "\"bad-key\": \"x\"\n")
	nested := file("nested.yaml", "allowListMapping:\n  \"a,b\": \"c\"\n")
	keyErr := "must have keys with format `metricName,labelName` where metricName matches \"[a-zA-Z_:][a-zA-Z0-9_:]*\" and labelName matches \"[a-zA-Z_][a-zA-Z0-9_]*\""
	for _, c := range []struct {
		args  []string
		err   string
		allow map[string]string
	}{
		{args: []string{"--disabled-metrics=apiserver_request_total,go_goroutines"}},
		{args: []string{"--disabled-metrics=bad-name"},
			err: `metrics.disabledMetrics: Invalid value: ["bad-name"]: must be fully qualified metric names matching "^[a-zA-Z_:][a-zA-Z0-9_:]*$", got "bad-name"`},
		{args: []string{"--disabled-metrics=a,,b"},
			err: `metrics.disabledMetrics: Invalid value: ["a","","b"]: must be fully qualified metric names matching "^[a-zA-Z_:][a-zA-Z0-9_:]*$", got ""`},
		// One "=": the whole value is one pair (pflag).
		{args: []string{"--allow-metric-labels=apiserver_request_total,verb=GET,LIST"},
			allow: map[string]string{"apiserver_request_total,verb": "GET,LIST"}},
		{args: []string{"--allow-metric-labels=foo=bar"},
			err: `metrics.allowListMapping: Invalid value: {"foo":"bar"}: ` + keyErr},
		{args: []string{"--allow-metric-labels-manifest=" + ok},
			allow: map[string]string{"etcd_requests_total,operation": "create,get"}},
		{args: []string{"--allow-metric-labels-manifest=" + filepath.Join(dir, "none")},
			err: `metrics.allowListMappingManifest: Invalid value: "` + filepath.Join(dir, "none") + `": failed to read allow list manifest: open ` + filepath.Join(dir, "none") + `: no such file or directory`},
		{args: []string{"--allow-metric-labels-manifest=" + badYAML},
			err: `metrics.allowListMappingManifest: Invalid value: "` + badYAML + `": failed to parse allow list manifest: yaml: line 1: did not find expected node content`},
		{args: []string{"--allow-metric-labels-manifest=" + badKey},
			err: `metrics.allowListMappingManifest: Invalid value: "` + badKey + `": invalid allow list mapping in manifest: [metrics.allowListMappingManifest: Invalid value: {"bad-key":"x"}: ` + keyErr + `]`},
		// The format the flag's help shows is refused, as upstream.
		{args: []string{"--allow-metric-labels-manifest=" + nested},
			err: `metrics.allowListMappingManifest: Invalid value: "` + nested + `": failed to parse allow list manifest: yaml: unmarshal errors:` + "\n  line 2: cannot unmarshal !!map into string"},
		{args: []string{"--allow-metric-labels=apiserver_request_total,verb=GET", "--allow-metric-labels-manifest=" + ok},
			err: `metrics: Invalid value: {"allowListMapping":{"apiserver_request_total,verb":"GET"},"allowListMappingManifest":"` + ok + `"}: cannot specify both allowListMapping and allowListMappingManifest`},
	} {
		o := NewMetricsOptions()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		errs := o.Validate()
		switch {
		case c.err == "" && len(errs) != 0:
			t.Errorf("%q: got %v, want no error", c.args, errs)
			continue
		case c.err != "" && (len(errs) != 1 || errs[0].Error() != c.err):
			t.Errorf("%q: got %v, want %q", c.args, errs, c.err)
			continue
		case c.err != "":
			continue
		}
		allow, err := o.LabelAllowList()
		if err != nil || !maps.Equal(allow, c.allow) {
			t.Errorf("%q: allow-list %v, %v; want %v", c.args, allow, err, c.allow)
		}
	}
}
