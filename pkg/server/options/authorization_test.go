package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestAuthorizationOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		errs []string
	}{
		{args: nil},
		{args: []string{"--authorization-mode=AlwaysAllow"}},
		{args: []string{"--authorization-mode=RBAC,AlwaysDeny"}},
		{args: []string{"--authorization-mode=RBAC,Webhook", "--authorization-webhook-config-file=/x"}},
		{args: []string{"--authorization-mode=Webhook"}, errs: []string{"authorization-mode Webhook's authorization config file not passed"}},
		{args: []string{"--authorization-webhook-config-file=/x"}, errs: []string{"cannot specify --authorization-webhook-config-file without mode Webhook"}},
		{args: []string{"--authorization-mode=Node,RBAC"}},
		{args: []string{"--authorization-mode=Node,Node"}, errs: []string{`authorization-mode "Node" has mode specified more than once`}},
		{args: []string{"--authorization-mode=RBAC,RBAC"}, errs: []string{`authorization-mode "RBAC" has mode specified more than once`}},
		{args: []string{"--authorization-mode=Magic"}, errs: []string{`authorization-mode "Magic" is not a valid mode`}},
		{args: []string{"--authorization-mode="}, errs: []string{"at least one authorization-mode must be passed"}},
		{args: []string{"--authorization-config=/c"}},
		{args: []string{"--authorization-config=/c", "--authorization-mode=RBAC"}, errs: []string{"--authorization-config can not be specified when --authorization-mode is specified"}},
		{args: []string{"--authorization-config=/c", "--authorization-webhook-config-file=/x"}, errs: []string{"--authorization-config can not be specified when --authorization-webhook-config-file is specified"}},
		{args: []string{"--authorization-mode=Webhook", "--authorization-webhook-config-file=/x", "--authorization-webhook-version=v2"},
			errs: []string{`--authorization-webhook-version "v2": must be v1 or v1beta1`}},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		o := NewAuthorizationOptions()
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		errs := o.Validate()
		if len(errs) != len(tc.errs) {
			t.Errorf("%v: got %v, want %v", tc.args, errs, tc.errs)
			continue
		}
		for i, e := range errs {
			if !strings.Contains(e.Error(), tc.errs[i]) {
				t.Errorf("%v: got %v, want %q", tc.args, e, tc.errs[i])
			}
		}
	}
	if o := NewAuthorizationOptions(); !o.Has(ModeRBAC) || len(o.EffectiveModes()) != 1 {
		t.Errorf("default modes %v, want [RBAC]", o.EffectiveModes())
	}
}
