package manager

import "testing"

// Expected decisions follow kube-controller-manager's IsControllerEnabled
// (cmd/kube-controller-manager/app/controllermanager.go, v1.37) and its
// canonicalisation of aliases (k8s.io/controller-manager options/generic.go).
func TestEnabled(t *testing.T) {
	tests := []struct {
		controllers []string
		name        string
		want        bool
	}{
		{[]string{"*"}, GarbageCollectorController, true},
		{[]string{"*", "-garbage-collector-controller"}, GarbageCollectorController, false},
		{[]string{"*", "-garbage-collector-controller"}, ServiceAccountController, true},
		{[]string{"-garbage-collector-controller", "*"}, GarbageCollectorController, false},
		// The old names are aliases.
		{[]string{"*", "-garbagecollector"}, GarbageCollectorController, false},
		{[]string{"serviceaccount"}, ServiceAccountController, true},
		{[]string{"serviceaccount"}, RootCACertificatePublisherController, false},
		{[]string{"root-ca-cert-publisher"}, RootCACertificatePublisherController, true},
		{[]string{"*", "-csrsigning"}, CertificateSigningRequestSigningController, false},
		{[]string{"*", "-csrsigning"}, CertificateSigningRequestApprovingController, true},
		{[]string{"csrcleaner"}, CertificateSigningRequestCleanerController, true},
		{[]string{"*", "-pvc-protection"}, PersistentVolumeClaimProtectionController, false},
		{[]string{"*", "-pvc-protection"}, PersistentVolumeProtectionController, true},
		{[]string{"pv-protection"}, PersistentVolumeProtectionController, true},
		// The first entry naming a controller decides.
		{[]string{"garbage-collector-controller", "-garbage-collector-controller"}, GarbageCollectorController, true},
		// No "*": only what is named.
		{[]string{}, GarbageCollectorController, false},
		{[]string{"-serviceaccount-controller"}, GarbageCollectorController, false},
	}
	for _, tc := range tests {
		if got := Enabled(tc.name, tc.controllers); got != tc.want {
			t.Errorf("Enabled(%s, %q): got %v, want %v", tc.name, tc.controllers, got, tc.want)
		}
	}
}

func TestKnownAndAliases(t *testing.T) {
	want := []string{
		CertificateSigningRequestApprovingController, CertificateSigningRequestCleanerController, CertificateSigningRequestSigningController,
		GarbageCollectorController, PersistentVolumeProtectionController, PersistentVolumeClaimProtectionController,
		ResourceQuotaController, RootCACertificatePublisherController, ServiceAccountController,
		ServiceAccountTokenController, VolumeAttributesClassProtectionController,
	}
	got := Known()
	if len(got) != len(want) {
		t.Fatalf("Known: got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Known[%d]: got %s, want %s", i, got[i], want[i])
		}
	}
	for alias, name := range Aliases() {
		if canonical(alias) != name || canonical("-"+alias) != "-"+name {
			t.Errorf("alias %s does not canonicalise to %s", alias, name)
		}
	}
}
