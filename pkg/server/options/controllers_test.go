package options

import (
	"strings"
	"testing"
	"time"
)

func TestControllerOptionsValidate(t *testing.T) {
	known := []string{"garbage-collector-controller", "serviceaccount-controller"}
	aliases := map[string]string{"garbagecollector": "garbage-collector-controller"}
	tests := []struct {
		name   string
		change func(*ControllerOptions)
		want   []string
	}{
		{"defaults", func(*ControllerOptions) {}, nil},
		{"names, aliases and negations", func(o *ControllerOptions) {
			o.Controllers = []string{"*", "-garbagecollector", "serviceaccount-controller"}
		}, nil},
		// kube-controller-manager's message, for a name with or without "-".
		{"unknown", func(o *ControllerOptions) { o.Controllers = []string{"*", "-garbage-collector", "bogus"} },
			[]string{`"garbage-collector" is not in the list of known controllers`, `"bogus" is not in the list of known controllers`}},
		// kube-controller-manager's other controllers: accepted, not run.
		{"not run here", func(o *ControllerOptions) {
			o.Controllers = []string{"*", "-deployment-controller", "deployment", "-bogus"}
		},
			[]string{`"bogus" is not in the list of known controllers`}},
		{"lease not longer than renew deadline", func(o *ControllerOptions) { o.LeaseDuration = 10 * time.Second },
			[]string{"--leader-elect-lease-duration (10s) must be greater than --leader-elect-renew-deadline (10s)"}},
		{"renew deadline too short for the retry period", func(o *ControllerOptions) { o.RetryPeriod = 9 * time.Second },
			[]string{"--leader-elect-renew-deadline (10s) must be greater than 1.2 × --leader-elect-retry-period (9s)"}},
		{"durations ignored without leader election", func(o *ControllerOptions) { o.LeaderElect = false; o.LeaseDuration = 0 }, nil},
		{"empty lease name", func(o *ControllerOptions) { o.ResourceName = "" }, []string{"--leader-elect-resource-name must not be empty"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := NewControllerOptions()
			tc.change(o)
			errs := o.Validate(known, aliases, func(name string) bool { return name == "deployment-controller" || name == "deployment" })
			var got []string
			for _, err := range errs {
				got = append(got, err.Error())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
