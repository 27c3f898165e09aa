package apps

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// FuzzValidate decodes arbitrary bodies as each apps/v1 kind (defaulting,
// as the API server does) and validates them, as new objects and as
// updates of a valid one: nothing may panic.
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"a"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`,
		`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"a"},"spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"0%"}},"ordinals":{"start":-1}}}`,
		`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"a","annotations":{"deprecated.daemonset.template.generation":"x"}},"spec":{"updateStrategy":{"rollingUpdate":{"maxSurge":"200%"}}}}`,
		`{"apiVersion":"apps/v1","kind":"ReplicaSet","spec":{"selector":{"matchExpressions":[{"key":"","operator":"In"}]}}}`,
		`{"apiVersion":"apps/v1","kind":"ControllerRevision","data":null,"revision":-5}`,
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"deprecated.deployment.rollback.to":"z"}},"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"abc%"}}}}`,
	} {
		f.Add([]byte(seed))
	}
	dec := scheme.Codecs.UniversalDecoder(appsv1.SchemeGroupVersion)
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, _, err := dec.Decode(body, nil, nil)
		if err != nil {
			return
		}
		validateAny(obj)
	})
}

func validateAny(obj runtime.Object) {
	opts := PodValidationOptions{}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		ValidateDeployment(o, opts)
		ValidateDeploymentUpdate(o, validDeployment(), opts)
		ValidateDeploymentStatusUpdateFields(o, validDeployment())
	case *appsv1.ReplicaSet:
		ValidateReplicaSet(o, opts)
		ValidateReplicaSetUpdate(o, validReplicaSet(), opts)
		ValidateReplicaSetStatusUpdateFields(o, validReplicaSet())
	case *appsv1.StatefulSet:
		ValidateStatefulSet(o, opts)
		ValidateStatefulSetUpdate(o, validStatefulSet(), opts)
		ValidateStatefulSetStatusUpdateFields(o, validStatefulSet())
	case *appsv1.DaemonSet:
		ValidateDaemonSet(o, opts)
		ValidateDaemonSetUpdate(o, validDaemonSet(), opts)
		ValidateDaemonSetStatusUpdateFields(o, validDaemonSet())
	case *appsv1.ControllerRevision:
		ValidateControllerRevision(o)
		ValidateControllerRevisionUpdate(o, o)
	}
}
