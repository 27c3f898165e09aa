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
}

// Known returns the canonical names of the controllers kapi runs, sorted.
// Names of kube-controller-manager controllers kapi does not have are
// rejected by --controllers rather than silently ignored.
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
