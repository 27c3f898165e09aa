package pki

import (
	"crypto/x509"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadServing(t *testing.T) {
	dir := t.TempDir()
	b := ensure(t, Config{Dir: dir})
	garbage := filepath.Join(dir, "garbage.pem")
	writeFile(t, garbage, []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	missing := filepath.Join(dir, "missing.pem")

	tests := []struct {
		name      string
		cert, key string
		wantErr   []string // substrings
	}{
		{name: "generated pair", cert: b.Files.ServingCert, key: b.Files.ServingKey},
		{name: "missing cert", cert: missing, key: b.Files.ServingKey, wantErr: []string{"read serving certificate", missing}},
		{name: "missing key", cert: b.Files.ServingCert, key: missing, wantErr: []string{"read serving key", missing}},
		{name: "garbage cert", cert: garbage, key: b.Files.ServingKey, wantErr: []string{garbage}},
		{name: "mismatched key", cert: b.Files.ServingCert, key: b.Files.AdminKey, wantErr: []string{b.Files.ServingCert, b.Files.AdminKey, "does not match"}},
		{name: "only cert given", cert: b.Files.ServingCert, wantErr: []string{"certificate and key must be supplied as a pair"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadServing(tc.cert, tc.key)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("got no error, want one containing %q", tc.wantErr)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Leaf == nil || !got.Leaf.Equal(b.Serving.Leaf) || len(got.Certificate) != 2 {
				t.Errorf("loaded pair differs from the generated one")
			}
		})
	}
}

func TestLoadCAPool(t *testing.T) {
	dir := t.TempDir()
	b := ensure(t, Config{Dir: dir})
	other := ensure(t, Config{})
	bundle := filepath.Join(dir, "bundle.pem")
	writeFile(t, bundle, append(append([]byte("# two CAs\n"), b.CAPEM...), other.CAPEM...))
	keyOnly := b.Files.CAKey
	bad := filepath.Join(dir, "bad.pem")
	writeFile(t, bad, append(append([]byte{}, b.CAPEM...), "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"...))

	t.Run("bundle of two", func(t *testing.T) {
		pool, err := LoadCAPool(bundle)
		if err != nil {
			t.Fatal(err)
		}
		for i, leaf := range []*x509.Certificate{b.Serving.Leaf, other.Serving.Leaf} {
			if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool}); err != nil {
				t.Errorf("leaf %d does not verify against the pool: %v", i, err)
			}
		}
	})
	t.Run("serving chain file", func(t *testing.T) {
		// apiserver.crt holds a leaf and the CA; both become roots.
		if _, err := LoadCAPool(b.Files.ServingCert); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("missing", func(t *testing.T) {
		_, err := LoadCAPool(filepath.Join(dir, "nope.crt"))
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "nope.crt") {
			t.Errorf("got %v, want a not-exist error naming the file", err)
		}
	})
	t.Run("no certificates", func(t *testing.T) {
		_, err := LoadCAPool(keyOnly)
		if err == nil || !strings.Contains(err.Error(), keyOnly) || !strings.Contains(err.Error(), "no PEM CERTIFICATE") {
			t.Errorf("got %v, want an error naming %s", err, keyOnly)
		}
	})
	t.Run("unparsable certificate", func(t *testing.T) {
		_, err := LoadCAPool(bad)
		if err == nil || !strings.Contains(err.Error(), "certificate 2 of CA bundle "+bad) {
			t.Errorf("got %v, want an error naming certificate 2 of %s", err, bad)
		}
	})
}
