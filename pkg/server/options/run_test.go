package options

import (
	"strings"
	"testing"
)

func TestRunOptionsCORSAndHSTSValidation(t *testing.T) {
	for _, tc := range []struct {
		cors, hsts []string
		goaway     float64
		wantErr    string
	}{
		{cors: []string{`^https://a\.example\.com$`}, hsts: []string{"max-age=60", "preload"}},
		{cors: []string{`(`}, wantErr: "--cors-allowed-origins"},
		{hsts: []string{"max-age=abc"}, wantErr: "--strict-transport-security-directives"},
		{goaway: 0.02},
		{goaway: 0.03, wantErr: "--goaway-chance can not be less than 0 or greater than 0.02"},
		{goaway: -0.1, wantErr: "--goaway-chance can not be less than 0 or greater than 0.02"},
	} {
		o := NewServerRunOptions()
		o.CORSAllowedOrigins, o.HSTSDirectives, o.GoawayChance = tc.cors, tc.hsts, tc.goaway
		errs := o.Validate()
		switch {
		case tc.wantErr == "" && len(errs) > 0:
			t.Errorf("%v %v: got %v, want no error", tc.cors, tc.hsts, errs)
		case tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr)):
			t.Errorf("%v %v: got %v, want one error naming %s", tc.cors, tc.hsts, errs, tc.wantErr)
		}
	}
}
