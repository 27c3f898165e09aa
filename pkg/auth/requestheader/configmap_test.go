package requestheader

import (
	"crypto/x509"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAuthenticationConfigMapData(t *testing.T) {
	clientCA := []byte("-----BEGIN CERTIFICATE-----\nY2xpZW50\n-----END CERTIFICATE-----\n")
	rhCA := []byte("-----BEGIN CERTIFICATE-----\ncHJveHk=\n-----END CERTIFICATE-----\n")
	tests := []struct {
		name     string
		clientCA []byte
		rh       Config
		rhCA     []byte
		want     map[string]string
	}{
		{
			name:     "kapi defaults",
			clientCA: clientCA,
			rh:       DefaultConfig(x509.NewCertPool()),
			rhCA:     rhCA,
			want: map[string]string{
				"client-ca-file":                     string(clientCA),
				"requestheader-client-ca-file":       string(rhCA),
				"requestheader-allowed-names":        `["front-proxy-client"]`,
				"requestheader-username-headers":     `["X-Remote-User"]`,
				"requestheader-uid-headers":          `["X-Remote-Uid"]`,
				"requestheader-group-headers":        `["X-Remote-Group"]`,
				"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
			},
		},
		{
			name:     "empty lists are []",
			clientCA: clientCA,
			rh:       Config{UsernameHeaders: []string{"X-Remote-User", `Odd"Name`}},
			rhCA:     rhCA,
			want: map[string]string{
				"client-ca-file":                     string(clientCA),
				"requestheader-client-ca-file":       string(rhCA),
				"requestheader-allowed-names":        `[]`,
				"requestheader-username-headers":     `["X-Remote-User","Odd\"Name"]`,
				"requestheader-uid-headers":          `[]`,
				"requestheader-group-headers":        `[]`,
				"requestheader-extra-headers-prefix": `[]`,
			},
		},
		{
			name:     "no requestheader CA: client CA only",
			clientCA: clientCA,
			rh:       DefaultConfig(nil),
			want:     map[string]string{"client-ca-file": string(clientCA)},
		},
		{
			name: "nothing",
			rh:   DefaultConfig(nil),
			want: map[string]string{},
		},
		{
			name: "requestheader CA without client CA",
			rh:   DefaultConfig(nil),
			rhCA: rhCA,
			want: map[string]string{
				"requestheader-client-ca-file":       string(rhCA),
				"requestheader-allowed-names":        `["front-proxy-client"]`,
				"requestheader-username-headers":     `["X-Remote-User"]`,
				"requestheader-uid-headers":          `["X-Remote-Uid"]`,
				"requestheader-group-headers":        `["X-Remote-Group"]`,
				"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AuthenticationConfigMapData(tc.clientCA, tc.rh, tc.rhCA)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("data mismatch (-want +got):\n%s", diff)
			}
			// Lists decode as upstream's reader decodes them.
			for _, k := range []string{"requestheader-allowed-names", "requestheader-username-headers", "requestheader-uid-headers",
				"requestheader-group-headers", "requestheader-extra-headers-prefix"} {
				v, ok := got[k]
				if !ok {
					continue
				}
				var list []string
				if err := json.Unmarshal([]byte(v), &list); err != nil {
					t.Errorf("%s = %q does not decode as a JSON string array: %v", k, v, err)
				}
			}
		})
	}
}
