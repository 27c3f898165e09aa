package options

import (
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
