package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// validRC is upstream's docs example, defaulted as decoding defaults it.
func validRC() *corev1.ReplicationController {
	rc := &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default", ResourceVersion: "1"},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: ptr.To[int32](3),
			Selector: map[string]string{"app": "nginx"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyAlways,
					DNSPolicy:     corev1.DNSClusterFirst,
					Containers: []corev1.Container{{
						Name: "nginx", Image: "nginx", ImagePullPolicy: corev1.PullAlways,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					}},
				},
			},
		},
	}
	scheme.Scheme.Default(rc)
	return rc
}

// The expected types, paths and messages are upstream's
// ValidateReplicationController, ValidatePodTemplateSpecForRC and
// ValidateReplicationControllerStatusUpdate
// (pkg/apis/core/validation/validation.go, kubernetes v1.37).
func TestValidateReplicationController(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*corev1.ReplicationController)
		want   []string
	}{
		{"valid", func(*corev1.ReplicationController) {}, nil},
		{"negative replicas", func(rc *corev1.ReplicationController) { rc.Spec.Replicas = ptr.To[int32](-1) }, []string{
			"FieldValueInvalid spec.replicas: must be greater than or equal to 0",
		}},
		{"negative minReadySeconds", func(rc *corev1.ReplicationController) { rc.Spec.MinReadySeconds = -5 }, []string{
			"FieldValueInvalid spec.minReadySeconds: must be greater than or equal to 0",
		}},
		{"no selector", func(rc *corev1.ReplicationController) { rc.Spec.Selector = nil }, []string{
			"FieldValueRequired spec.selector: ",
		}},
		{"selector not matching the template", func(rc *corev1.ReplicationController) { rc.Spec.Selector = map[string]string{"app": "web"} }, []string{
			"FieldValueInvalid spec.template.metadata.labels: `selector` does not match template `labels`",
		}},
		{"no template", func(rc *corev1.ReplicationController) { rc.Spec.Template = nil }, []string{
			"FieldValueRequired spec.template: ",
		}},
		{"restart policy Never", func(rc *corev1.ReplicationController) {
			rc.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
		}, []string{
			`FieldValueNotSupported spec.template.spec.restartPolicy: supported values: "Always"`,
		}},
		{"active deadline", func(rc *corev1.ReplicationController) {
			rc.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](10)
		}, []string{
			"FieldValueForbidden spec.template.spec.activeDeadlineSeconds: activeDeadlineSeconds in ReplicationController is not Supported",
		}},
		{"container without image", func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.Containers[0].Image = "" }, []string{
			"FieldValueRequired spec.template.spec.containers[0].image: ",
		}},
		{"no containers", func(rc *corev1.ReplicationController) { rc.Spec.Template.Spec.Containers = nil }, []string{
			"FieldValueRequired spec.template.spec.containers: ",
		}},
		{"ephemeral container in the template", func(rc *corev1.ReplicationController) {
			rc.Spec.Template.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent, TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}}}
		}, []string{"FieldValueForbidden spec.template.spec.ephemeralContainers: ephemeral containers not allowed in pod template"}},
		{"invalid name", func(rc *corev1.ReplicationController) { rc.Name = "Nginx" }, []string{
			"FieldValueInvalid metadata.name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
		}},
		{"invalid template label", func(rc *corev1.ReplicationController) {
			rc.Spec.Selector = map[string]string{"app": "nginx"}
			rc.Spec.Template.Labels["bad key"] = "x"
		}, []string{
			"FieldValueInvalid spec.template.labels: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rc := validRC()
			tc.mutate(rc)
			expectErrs(t, ValidateReplicationController(rc), tc.want)
		})
	}
}

func TestValidateReplicationControllerStatusUpdate(t *testing.T) {
	old := validRC()
	rc := old.DeepCopy()
	rc.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 3, AvailableReplicas: 4, FullyLabeledReplicas: -1}
	expectErrs(t, ValidateReplicationControllerStatusUpdateFields(rc, old), []string{
		"FieldValueInvalid status.fullyLabeledReplicas: must be greater than or equal to 0",
		"FieldValueInvalid status.readyReplicas: cannot be greater than status.replicas",
		"FieldValueInvalid status.availableReplicas: cannot be greater than status.replicas",
		"FieldValueInvalid status.availableReplicas: cannot be greater than readyReplicas",
	})
}
