package apiservice

import (
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// The apiregistration.k8s.io/v1 kinds and their defaulting are added to
// the shared scheme once, before anything can read it concurrently.
func init() {
	utilruntime.Must(apiregistrationv1.AddToScheme(scheme.Scheme))
}
