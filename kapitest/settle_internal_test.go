package kapitest

import (
	"log/slog"
	"testing"
)

// TestSettledWithoutDefaultControllers: a server whose flags turn off the
// service-account controller or the root-CA publisher counts its storage
// as settled without the default ServiceAccounts or kube-root-ca.crt
// ConfigMaps those controllers would make (Start would otherwise wait its
// whole settleTimeout for them), and still waits for the ones a running
// controller makes.
func TestSettledWithoutDefaultControllers(t *testing.T) {
	for _, tc := range []struct {
		flag             string
		noSA, noRootCA   bool
		settledWithoutCA bool
		settledWithoutSA bool
	}{
		{flag: "--controllers=*", settledWithoutCA: false, settledWithoutSA: false},
		{flag: "--controllers=*,-root-ca-certificate-publisher-controller", noRootCA: true, settledWithoutCA: true},
		{flag: "--controllers=*,-serviceaccount-controller,-root-ca-cert-publisher", noSA: true, noRootCA: true, settledWithoutCA: true, settledWithoutSA: true},
	} {
		s, err := StartE(t.TempDir(), slog.New(slog.DiscardHandler), WithFlags(tc.flag))
		if err != nil {
			t.Fatalf("%s: %v", tc.flag, err)
		}
		_ = s.Stop()
		if s.noDefaultSA != tc.noSA || s.noRootCA != tc.noRootCA {
			t.Errorf("%s: noDefaultSA, noRootCA = %v, %v; want %v, %v", tc.flag, s.noDefaultSA, s.noRootCA, tc.noSA, tc.noRootCA)
		}
		root := s.storage.root()
		ns := root + "/namespaces/team"
		sa := root + "/serviceaccounts/team/default"
		ca := root + "/configmaps/team/kube-root-ca.crt"
		state := func(keys ...string) map[string][]byte {
			m := map[string][]byte{}
			for _, k := range keys {
				m[k] = nil
			}
			return m
		}
		if !s.settled(state(ns, sa, ca), true) {
			t.Errorf("%s: a namespace with both defaults is not settled", tc.flag)
		}
		if got := s.settled(state(ns, sa), true); got != tc.settledWithoutCA {
			t.Errorf("%s: settled without kube-root-ca.crt = %v, want %v", tc.flag, got, tc.settledWithoutCA)
		}
		if got := s.settled(state(ns, ca), true); got != tc.settledWithoutSA {
			t.Errorf("%s: settled without the default ServiceAccount = %v, want %v", tc.flag, got, tc.settledWithoutSA)
		}
	}
}
