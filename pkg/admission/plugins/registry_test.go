package plugins

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestEnabledNamesDefault checks the default set in upstream's order
// (kubernetes/kubernetes pkg/kubeapiserver/options/plugins.go,
// DefaultOffAdmissionPlugins; the order is AllOrderedPlugins'), all of
// them since kapi runs the storage protection controllers (session 17).
// kube-apiserver v1.37.2's --help lists the same, in this order.
func TestEnabledNamesDefault(t *testing.T) {
	want := []string{
		"NamespaceLifecycle", "LimitRanger", "ServiceAccount", "TaintNodesByCondition", "PodSecurity",
		"Priority", "DefaultTolerationSeconds", "DefaultStorageClass",
		"StorageObjectInUseProtection", "PodGroupProtection", "PersistentVolumeClaimResize", "RuntimeClass", "CertificateApproval",
		"CertificateSigning", "ClusterTrustBundleAttest", "CertificateSubjectRestriction", "DefaultIngressClass",
		"PodTopologyLabels", "NodeDeclaredFeatureValidator",
		"PodResizeValidator", "MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
		"ValidatingAdmissionWebhook", "ResourceQuota",
	}
	if got := EnabledNames(nil, nil); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if got := EnabledNames(nil, []string{"StorageObjectInUseProtection"}); slices.Contains(got, "StorageObjectInUseProtection") {
		t.Errorf("StorageObjectInUseProtection not disabled by the flag: %v", got)
	}
}

func TestEnabledNamesFlags(t *testing.T) {
	// The flags' order does not matter: AlwaysPullImages runs after
	// ServiceAccount, NamespaceExists before LimitRanger.
	got := EnabledNames([]string{"AlwaysPullImages", "NamespaceExists"}, []string{"ServiceAccount", "ResourceQuota"})
	idx := func(n string) int {
		for i, g := range got {
			if g == n {
				return i
			}
		}
		return -1
	}
	if idx("ServiceAccount") >= 0 || idx("ResourceQuota") >= 0 {
		t.Errorf("disabled plugins still enabled: %v", got)
	}
	if !(idx("NamespaceLifecycle") < idx("NamespaceExists") && idx("NamespaceExists") < idx("LimitRanger") &&
		idx("LimitRanger") < idx("AlwaysPullImages") && idx("AlwaysPullImages") < idx("PodSecurity")) {
		t.Errorf("not in upstream order: %v", got)
	}
	// Enabling a plugin that is also default-on, while disabling another:
	// enable wins over the default-off set only.
	if got := EnabledNames([]string{"NamespaceLifecycle"}, nil); got[0] != "NamespaceLifecycle" {
		t.Errorf("got %v", got)
	}
}

// TestValidateNames checks upstream's messages
// (k8s.io/apiserver/pkg/server/options/admission.go Validate).
func TestValidateNames(t *testing.T) {
	errs := ValidateNames([]string{"Bogus", "LimitRanger", "NamespaceLifecycle"}, []string{"Nope", "LimitRanger", "NamespaceLifecycle"})
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	want := []string{
		`enable-admission-plugins plugin "Bogus" is unknown`,
		`disable-admission-plugins plugin "Nope" is unknown`,
		`[LimitRanger NamespaceLifecycle] in enable-admission-plugins and disable-admission-plugins overlapped`,
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("got  %q\nwant %q", msgs, want)
	}
	if errs := ValidateNames([]string{"AlwaysPullImages", "ValidatingAdmissionWebhook"}, []string{"ServiceAccount"}); len(errs) != 0 {
		t.Errorf("valid names refused: %v", errs)
	}
}

func TestNewReportsUnavailable(t *testing.T) {
	ps, unavailable, err := New([]string{"NamespaceLifecycle", "AlwaysPullImages", "TaintNodesByCondition", "ResourceQuota"}, nil, Deps{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name())
	}
	if want := []string{"NamespaceLifecycle", "TaintNodesByCondition"}; !reflect.DeepEqual(names, want) {
		t.Errorf("built %v, want %v", names, want)
	}
	if want := []string{"AlwaysPullImages", "ResourceQuota"}; !reflect.DeepEqual(unavailable, want) {
		t.Errorf("unavailable %v, want %v", unavailable, want)
	}
	for _, n := range Implemented() {
		found := false
		for _, a := range AllOrderedPlugins {
			found = found || a == n
		}
		if !found {
			t.Errorf("implemented plugin %q is not one of upstream's names", n)
		}
	}
}

func TestReadConfigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("ps.yaml", "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\ndefaults:\n  enforce: baseline\n")
	cfg := write("admission.yaml", `apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  path: ps.yaml
- name: EventRateLimit
  configuration:
    apiVersion: eventratelimit.admission.k8s.io/v1alpha1
    kind: Configuration
    limits:
    - type: Server
      qps: 5
`)
	got, err := ReadConfigFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(got["PodSecurity"]); !strings.Contains(s, `"enforce":"baseline"`) {
		t.Errorf("PodSecurity config (path, relative to the file) = %s", s)
	}
	if s := string(got["EventRateLimit"]); !strings.Contains(s, `"qps":5`) {
		t.Errorf("EventRateLimit config (inline) = %s", s)
	}

	for name, tc := range map[string]struct{ data, want string }{
		"wrong kind":    {"apiVersion: apiserver.config.k8s.io/v1\nkind: Foo\n", `kind "Foo" is not AdmissionConfiguration`},
		"wrong version": {"apiVersion: v9\nkind: AdmissionConfiguration\n", `apiVersion "v9" is not supported`},
		"missing file":  {"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: X\n  path: nope.yaml\n", "nope.yaml"},
		"unknown field": {"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugin: []\n", "unknown field"},
	} {
		_, err := ReadConfigFile(write("bad.yaml", tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, tc.want)
		}
	}
	if _, err := ReadConfigFile(filepath.Join(dir, "absent.yaml")); err == nil {
		t.Errorf("absent file: got no error")
	}
}
