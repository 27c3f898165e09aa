package options

import (
	"strings"
	"testing"
)

func TestRunOptionsCORSAndHSTSValidation(t *testing.T) {
	for _, tc := range []struct {
		cors, hsts []string
		wantErr    string
	}{
		{cors: []string{`^https://a\.example\.com$`}, hsts: []string{"max-age=60", "preload"}},
		{cors: []string{`(`}, wantErr: "--cors-allowed-origins"},
		{hsts: []string{"max-age=abc"}, wantErr: "--strict-transport-security-directives"},
	} {
		o := NewServerRunOptions()
		o.CORSAllowedOrigins, o.HSTSDirectives = tc.cors, tc.hsts
		errs := o.Validate()
		switch {
		case tc.wantErr == "" && len(errs) > 0:
			t.Errorf("%v %v: got %v, want no error", tc.cors, tc.hsts, errs)
		case tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr)):
			t.Errorf("%v %v: got %v, want one error naming %s", tc.cors, tc.hsts, errs, tc.wantErr)
		}
	}
}
