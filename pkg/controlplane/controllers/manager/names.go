package manager

import (
	"slices"
	"strings"
)

// The controllers kapi runs, by kube-controller-manager's canonical names
// (cmd/kube-controller-manager/names/controller_names.go, v1.37).
const (
	GarbageCollectorController                   = "garbage-collector-controller"
	ServiceAccountController                     = "serviceaccount-controller"
	RootCACertificatePublisherController         = "root-ca-certificate-publisher-controller"
	ServiceAccountTokenController                = "serviceaccount-token-controller"
	CertificateSigningRequestSigningController   = "certificatesigningrequest-signing-controller"
	CertificateSigningRequestApprovingController = "certificatesigningrequest-approving-controller"
	CertificateSigningRequestCleanerController   = "certificatesigningrequest-cleaner-controller"
	ResourceQuotaController                      = "resourcequota-controller"
	PersistentVolumeClaimProtectionController    = "persistentvolumeclaim-protection-controller"
	PersistentVolumeProtectionController         = "persistentvolume-protection-controller"
	VolumeAttributesClassProtectionController    = "volumeattributesclass-protection-controller"
)

// aliases are the older names kube-controller-manager still accepts for
// them (its ControllerDescriptor aliases).
var aliases = map[string]string{
	"garbagecollector":       GarbageCollectorController,
	"serviceaccount":         ServiceAccountController,
	"root-ca-cert-publisher": RootCACertificatePublisherController,
	"serviceaccount-token":   ServiceAccountTokenController,
	"csrsigning":             CertificateSigningRequestSigningController,
	"csrapproving":           CertificateSigningRequestApprovingController,
	"csrcleaner":             CertificateSigningRequestCleanerController,
	"resourcequota":          ResourceQuotaController,
	"pvc-protection":         PersistentVolumeClaimProtectionController,
	"pv-protection":          PersistentVolumeProtectionController,
}

// notRun are kube-controller-manager v1.37's other controllers, by their
// canonical names (cmd/kube-controller-manager/names/controller_names.go,
// plus the cloud-provider ones it registers from
// k8s.io/cloud-provider/names) and their aliases
// (cmd/kube-controller-manager/app/*.go ControllerDescriptor aliases).
// --controllers accepts them, as kube-controller-manager does, so that a
// flag copied from a real cluster's kube-controller-manager starts kapi;
// kapi does not run them and says so in its log (NotRun).
var notRun = map[string][]string{
	"endpoints-controller":                                           {"endpoint"},
	"endpointslice-controller":                                       {"endpointslice"},
	"endpointslice-mirroring-controller":                             {"endpointslicemirroring"},
	"replicationcontroller-controller":                               {"replicationcontroller"},
	"pod-garbage-collector-controller":                               {"podgc"},
	"namespace-controller":                                           {"namespace"},
	"daemonset-controller":                                           {"daemonset"},
	"job-controller":                                                 {"job"},
	"deployment-controller":                                          {"deployment"},
	"replicaset-controller":                                          {"replicaset"},
	"horizontal-pod-autoscaler-controller":                           {"horizontalpodautoscaling"},
	"disruption-controller":                                          {"disruption"},
	"statefulset-controller":                                         {"statefulset"},
	"cronjob-controller":                                             {"cronjob"},
	"podcertificaterequest-cleaner-controller":                       nil,
	"ttl-controller":                                                 {"ttl"},
	"bootstrap-signer-controller":                                    {"bootstrapsigner"},
	"token-cleaner-controller":                                       {"tokencleaner"},
	"node-ipam-controller":                                           {"nodeipam"},
	"node-lifecycle-controller":                                      {"nodelifecycle"},
	"taint-eviction-controller":                                      nil,
	"device-taint-eviction-controller":                               nil,
	"persistentvolume-binder-controller":                             {"persistentvolume-binder"},
	"persistentvolume-attach-detach-controller":                      {"attachdetach"},
	"persistentvolume-expander-controller":                           {"persistentvolume-expander"},
	"clusterrole-aggregation-controller":                             {"clusterrole-aggregation"},
	"podgroup-protection-controller":                                 nil,
	"ttl-after-finished-controller":                                  {"ttl-after-finished"},
	"ephemeral-volume-controller":                                    {"ephemeral-volume"},
	"storageversion-garbage-collector-controller":                    {"storage-version-gc"},
	"resourceclaim-controller":                                       {"resource-claim-controller"},
	"resourcepoolstatusrequest-controller":                           nil,
	"legacy-serviceaccount-token-cleaner-controller":                 {"legacy-service-account-token-cleaner"},
	"validatingadmissionpolicy-status-controller":                    nil,
	"service-cidr-controller":                                        nil,
	"storage-version-migrator-controller":                            {"svm"},
	"selinux-warning-controller":                                     nil,
	"kube-apiserver-serving-clustertrustbundle-publisher-controller": nil,
	"service-lb-controller":                                          nil,
	"node-route-controller":                                          nil,
	"cloud-node-lifecycle-controller":                                nil,
}

// NotRun returns the entries of a --controllers list that name (with or
// without "-", by canonical name or alias) a kube-controller-manager
// controller kapi does not run, in the list's order.
func NotRun(controllers []string) []string {
	var out []string
	for _, entry := range controllers {
		if IsNotRun(strings.TrimPrefix(entry, "-")) {
			out = append(out, entry)
		}
	}
	return out
}

// IsNotRun reports whether name (without "-") is one of
// kube-controller-manager's controllers, or an alias of one, that kapi does
// not run.
func IsNotRun(name string) bool {
	for canonical, aliases := range notRun {
		if name == canonical || slices.Contains(aliases, name) {
			return true
		}
	}
	return false
}

// Known returns the canonical names of the controllers kapi runs, sorted.
// Names no kube-controller-manager knows are rejected by --controllers;
// kube-controller-manager's other controllers are accepted (NotRun).
func Known() []string {
	out := make([]string, 0, len(descriptors))
	for _, d := range descriptors {
		out = append(out, d.name)
	}
	slices.Sort(out)
	return out
}

// Aliases returns the accepted aliases, each mapped to its canonical name.
func Aliases() map[string]string {
	out := make(map[string]string, len(aliases))
	for k, v := range aliases {
		out[k] = v
	}
	return out
}

// canonical replaces an alias (after an optional "-") by its canonical
// name, as kube-controller-manager does before deciding.
func canonical(entry string) string {
	neg := strings.HasPrefix(entry, "-")
	name := strings.TrimPrefix(entry, "-")
	if c, ok := aliases[name]; ok {
		name = c
	}
	if neg {
		return "-" + name
	}
	return name
}

// Enabled reports whether the controller name is on with the
// --controllers list: the first entry naming it ("name" or "-name", an
// alias counting as its canonical name) decides; else "*" turns on the
// controllers that are on by default; else it is off (upstream's
// IsControllerEnabled).
func Enabled(name string, controllers []string) bool {
	star := false
	for _, entry := range controllers {
		switch canonical(entry) {
		case name:
			return true
		case "-" + name:
			return false
		case "*":
			star = true
		}
	}
	if !star {
		return false
	}
	for _, d := range descriptors {
		if d.name == name {
			return !d.disabledByDefault
		}
	}
	return false
}
