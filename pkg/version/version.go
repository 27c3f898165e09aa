// Package version tells which kapi this is and which Kubernetes API version
// it implements.
package version

import (
	"fmt"
	"runtime"
	"strconv"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
)

// The Kubernetes API version kapi implements: the k8s.io/api release its
// types come from.
const (
	KubeMajor = 1
	KubeMinor = 37
	KubePatch = 2
)

// Set at build time with -ldflags "-X github.com/kapi-dev/kapi/pkg/version.kapiVersion=...".
var (
	kapiVersion  = "0.1.0-dev"
	gitCommit    = ""
	gitTreeState = ""
	buildDate    = "1970-01-01T00:00:00Z"
)

// Kapi returns kapi's own version.
func Kapi() string { return kapiVersion }

// Get returns the /version document (serving.md 37). gitVersion is the
// Kubernetes version with kapi's as build metadata, e.g.
// "v1.37.2+kapi-0.1.0-dev", which semver-aware clients such as kubectl
// compare as v1.37.2.
func Get() apimachineryversion.Info {
	return apimachineryversion.Info{
		Major:                 strconv.Itoa(KubeMajor),
		Minor:                 strconv.Itoa(KubeMinor),
		EmulationMajor:        strconv.Itoa(KubeMajor),
		EmulationMinor:        strconv.Itoa(KubeMinor),
		MinCompatibilityMajor: strconv.Itoa(KubeMajor),
		MinCompatibilityMinor: strconv.Itoa(KubeMinor - 1),
		GitVersion:            fmt.Sprintf("v%d.%d.%d+kapi-%s", KubeMajor, KubeMinor, KubePatch, kapiVersion),
		GitCommit:             gitCommit,
		GitTreeState:          gitTreeState,
		BuildDate:             buildDate,
		GoVersion:             runtime.Version(),
		Compiler:              runtime.Compiler,
		Platform:              runtime.GOOS + "/" + runtime.GOARCH,
	}
}
