package options

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestAdmissionPluginsUsage checks the admission plugin flags' help against
// kube-apiserver v1.37.2's (`kube-apiserver --help`, recorded in session 18,
// spaces squeezed); kapi's enable flag adds one sentence on what it
// implements.
func TestAdmissionPluginsUsage(t *testing.T) {
	const upstreamDisable = "--disable-admission-plugins strings admission plugins that should be disabled although they are in " +
		"the default enabled plugins list (NamespaceLifecycle, LimitRanger, ServiceAccount, " +
		"TaintNodesByCondition, PodSecurity, Priority, DefaultTolerationSeconds, DefaultStorageClass, " +
		"StorageObjectInUseProtection, PodGroupProtection, PersistentVolumeClaimResize, RuntimeClass, " +
		"CertificateApproval, CertificateSigning, ClusterTrustBundleAttest, CertificateSubjectRestriction, " +
		"DefaultIngressClass, PodTopologyLabels, NodeDeclaredFeatureValidator, PodResizeValidator, " +
		"MutatingAdmissionPolicy, MutatingAdmissionWebhook, ValidatingAdmissionPolicy, " +
		"ValidatingAdmissionWebhook, ResourceQuota). Comma-delimited list of admission plugins: AlwaysAdmit, " +
		"AlwaysDeny, AlwaysPullImages, CertificateApproval, CertificateSigning, " +
		"CertificateSubjectRestriction, ClusterTrustBundleAttest, DefaultIngressClass, DefaultStorageClass, " +
		"DefaultTolerationSeconds, DenyServiceExternalIPs, EventRateLimit, ExtendedResourceToleration, " +
		"ImagePolicyWebhook, LimitPodHardAntiAffinityTopology, LimitRanger, MutatingAdmissionPolicy, " +
		"MutatingAdmissionWebhook, NamespaceAutoProvision, NamespaceExists, NamespaceLifecycle, " +
		"NodeDeclaredFeatureValidator, NodeRestriction, OwnerReferencesPermissionEnforcement, " +
		"PersistentVolumeClaimResize, PodGroupProtection, PodNodeSelector, PodResizeValidator, PodSecurity, " +
		"PodTolerationRestriction, PodTopologyLabels, Priority, ResourceQuota, RuntimeClass, ServiceAccount, " +
		"StorageObjectInUseProtection, TaintNodesByCondition, ValidatingAdmissionPolicy, " +
		"ValidatingAdmissionWebhook. The order of plugins in this flag does not matter."
	const upstreamEnable = "--enable-admission-plugins strings admission plugins that should be enabled in addition to default " +
		"enabled ones (NamespaceLifecycle, LimitRanger, ServiceAccount, TaintNodesByCondition, PodSecurity, " +
		"Priority, DefaultTolerationSeconds, DefaultStorageClass, StorageObjectInUseProtection, " +
		"PodGroupProtection, PersistentVolumeClaimResize, RuntimeClass, CertificateApproval, " +
		"CertificateSigning, ClusterTrustBundleAttest, CertificateSubjectRestriction, DefaultIngressClass, " +
		"PodTopologyLabels, NodeDeclaredFeatureValidator, PodResizeValidator, MutatingAdmissionPolicy, " +
		"MutatingAdmissionWebhook, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, ResourceQuota). " +
		"Comma-delimited list of admission plugins: AlwaysAdmit, AlwaysDeny, AlwaysPullImages, " +
		"CertificateApproval, CertificateSigning, CertificateSubjectRestriction, ClusterTrustBundleAttest, " +
		"DefaultIngressClass, DefaultStorageClass, DefaultTolerationSeconds, DenyServiceExternalIPs, " +
		"EventRateLimit, ExtendedResourceToleration, ImagePolicyWebhook, LimitPodHardAntiAffinityTopology, " +
		"LimitRanger, MutatingAdmissionPolicy, MutatingAdmissionWebhook, NamespaceAutoProvision, " +
		"NamespaceExists, NamespaceLifecycle, NodeDeclaredFeatureValidator, NodeRestriction, " +
		"OwnerReferencesPermissionEnforcement, PersistentVolumeClaimResize, PodGroupProtection, " +
		"PodNodeSelector, PodResizeValidator, PodSecurity, PodTolerationRestriction, PodTopologyLabels, " +
		"Priority, ResourceQuota, RuntimeClass, ServiceAccount, StorageObjectInUseProtection, " +
		"TaintNodesByCondition, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook. The order of plugins " +
		"in this flag does not matter."
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	NewAdmissionOptions().AddFlags(fs)
	usage := map[string]string{}
	for _, line := range strings.Split(fs.FlagUsages(), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			usage[f[0]] = strings.Join(f, " ")
		}
	}
	if got := usage["--disable-admission-plugins"]; got != upstreamDisable {
		t.Errorf("--disable-admission-plugins usage:\n got  %q\n want %q", got, upstreamDisable)
	}
	got, kapiNote, _ := strings.Cut(usage["--enable-admission-plugins"], " Plugins kapi does not implement")
	if got != upstreamEnable || kapiNote == "" {
		t.Errorf("--enable-admission-plugins usage:\n got  %q\n want %q + kapi's note", usage["--enable-admission-plugins"], upstreamEnable)
	}
}
