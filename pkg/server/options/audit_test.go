package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestAuditFlagsValidate: the --audit-*-version and truncate flags are
// checked with upstream's messages (k8s.io/apiserver
// pkg/server/options/audit.go v1.37), only for the backends in use.
func TestAuditFlagsValidate(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" valid
	}{
		{[]string{"--audit-log-version=audit.k8s.io/v1beta1"}, ""}, // no log: not checked
		{[]string{"--audit-log-path=/tmp/a", "--audit-log-version=audit.k8s.io/v1"}, ""},
		{[]string{"--audit-log-path=/tmp/a", "--audit-log-version=audit.k8s.io/v1beta1"}, `invalid group version, allowed versions are ["audit.k8s.io/v1"]`},
		{[]string{"--audit-log-path=/tmp/a", "--audit-log-truncate-max-event-size=0"}, "invalid audit truncate log max event size 0, must be a positive number"},
		{[]string{"--audit-log-path=/tmp/a", "--audit-log-truncate-max-event-size=100", "--audit-log-truncate-max-batch-size=10"}, "invalid audit truncate log max batch size 10, must be greater than max event size (100)"},
		{[]string{"--audit-webhook-config-file=/tmp/k", "--audit-webhook-version=v1"}, `invalid group version, allowed versions are ["audit.k8s.io/v1"]`},
		{[]string{"--audit-webhook-config-file=/tmp/k", "--audit-webhook-truncate-max-event-size=-1"}, "invalid audit truncate webhook max event size -1, must be a positive number"},
		{[]string{"--audit-log-compress", "--audit-webhook-initial-backoff=1s", "--audit-webhook-truncate-enabled"}, ""},
	} {
		o := NewAuditOptions()
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		var msgs []string
		for _, err := range o.Validate() {
			msgs = append(msgs, err.Error())
		}
		if got := strings.Join(msgs, "; "); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}
