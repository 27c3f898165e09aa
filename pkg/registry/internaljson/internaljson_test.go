package internaljson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// TestTableParses checks that every type expression of the generated table
// resolves: each internal type it names is in the table, each type of
// another package has a zero value here.
func TestTableParses(t *testing.T) {
	if len(internalTypes()) < 500 {
		t.Fatalf("only %d internal types", len(internalTypes()))
	}
	for name, it := range internalTypes() {
		exprs := []string{it.underlying}
		if it.underlying == "" {
			exprs = exprs[:0]
			for _, f := range it.fields {
				exprs = append(exprs, f.typ)
			}
		}
		for _, s := range exprs {
			for e, err := parse(s); ; e = e.elem {
				if err != nil {
					t.Errorf("%s: %v", name, err)
					break
				}
				if e.elem == nil {
					break
				}
			}
		}
	}
}

// The forms below are kube-apiserver v1.37.2's (k8s.io/kubernetes@v1.37.2
// internal types, rendered by field.Error.ErrorBody), as the reference
// server answered them.
func TestValue(t *testing.T) {
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		// DaemonSet spec.updateStrategy type Bogus: the reference answered
		// Unsupported value: {"Type":"Bogus","RollingUpdate":null}.
		{"nil pointer member", appsv1.DaemonSetUpdateStrategy{Type: "Bogus"}, `{"Type":"Bogus","RollingUpdate":null}`},
		{"pointer", &appsv1.DaemonSetUpdateStrategy{Type: "OnDelete"}, `{"Type":"OnDelete","RollingUpdate":null}`},
		{"nil pointer", (*appsv1.DaemonSetUpdateStrategy)(nil), `null`},
		// Internal DeploymentStrategy has the same members; internal
		// DeploymentSpec has RollbackTo, which apps/v1 lacks: null.
		{"field only internal", appsv1.DeploymentSpec{Replicas: ptr.To[int32](2)}, `{"Replicas":2,"Selector":null,"Template":{"Spec":`},
		// Volume embeds VolumeSource: its members in place.
		{"embedded struct", []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Gi"))}}}},
			`[{"Name":"v","HostPath":null,"EmptyDir":{"Medium":"","SizeLimit":"1Gi","Mode":null},"GCEPersistentDisk":null,`},
		// ObjectMeta keeps its JSON form, flattened into PodTemplateSpec.
		{"shared embedded", corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"a": "b"}}}, `{"labels":{"a":"b"},"Spec":{"Volumes":null,`},
		{"map of structs", map[string]corev1.EnvVar{"k": {Name: "n"}}, `{"k":{"Name":"n","Value":"","ValueFrom":null}}`},
		{"other group", networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "s", Port: networkingv1.ServiceBackendPort{Number: 80}}},
			`{"Service":{"Name":"s","Port":{"Name":"","Number":80}},"Resource":null}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, err := json.Marshal(Value(c.v))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(j), c.want) {
				t.Errorf("got  %s\nwant %s...", j, c.want)
			}
		})
	}
}

// TestValueUnchanged: values that are not, and do not hold, structs of
// k8s.io/api types marshal alike in both forms and are returned as given.
func TestValueUnchanged(t *testing.T) {
	for _, v := range []any{
		nil, "s", int64(1), []string{"a"}, map[string]string{"a": "b"},
		corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, corev1.ProtocolTCP,
		metav1.LabelSelector{}, &metav1.ObjectMeta{}, field.OmitValueType{}, []byte("x"),
		struct{ A int }{1},
	} {
		if got := Value(v); !reflect.DeepEqual(got, v) || reflect.TypeOf(got) != reflect.TypeOf(v) {
			t.Errorf("Value(%#v) = %#v", v, got)
		}
	}
}

// TestJobTemplateImmutable is the whole message kube-apiserver v1.37.2
// answered to a Job update that changed its (defaulted) template's image;
// field.Error renders the wrapped value as upstream renders
// core.PodTemplateSpec.
func TestJobTemplateImmutable(t *testing.T) {
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"job-name": "j1", "x": "y"}},
		Spec: corev1.PodSpec{
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{
				Name: "c", Image: "busybox:2", Command: []string{"true"},
				Ports:                    []corev1.ContainerPort{{ContainerPort: 80, Protocol: corev1.ProtocolTCP}},
				Resources:                corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullAlways,
			}},
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			DNSPolicy:                     corev1.DNSClusterFirst,
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 "default-scheduler",
		},
	}
	got := field.Invalid(field.NewPath("spec", "template"), Value(tmpl), "field is immutable").Error()
	want := `spec.template: Invalid value: {"labels":{"job-name":"j1","x":"y"},"Spec":{"Volumes":[{"Name":"v","HostPath":null,"EmptyDir":{"Medium":"","SizeLimit":null,"Mode":null},"GCEPersistentDisk":null,"AWSElasticBlockStore":null,"GitRepo":null,"Secret":null,"NFS":null,"ISCSI":null,"Glusterfs":null,"PersistentVolumeClaim":null,"RBD":null,"FlexVolume":null,"Cinder":null,"CephFS":null,"Flocker":null,"DownwardAPI":null,"FC":null,"AzureFile":null,"ConfigMap":null,"VsphereVolume":null,"Quobyte":null,"AzureDisk":null,"PhotonPersistentDisk":null,"Projected":null,"PortworxVolume":null,"ScaleIO":null,"StorageOS":null,"CSI":null,"Ephemeral":null,"Image":null}],"InitContainers":null,"Containers":[{"Name":"c","Image":"busybox:2","Command":["true"],"Args":null,"WorkingDir":"","Ports":[{"Name":"","HostPort":0,"ContainerPort":80,"Protocol":"TCP","HostIP":""}],"EnvFrom":null,"Env":null,"Resources":{"Limits":{"cpu":"1"},"Requests":null,"Claims":null},"ResizePolicy":null,"RestartPolicy":null,"RestartPolicyRules":null,"VolumeMounts":null,"VolumeDevices":null,"LivenessProbe":null,"ReadinessProbe":null,"StartupProbe":null,"Lifecycle":null,"TerminationMessagePath":"/dev/termination-log","TerminationMessagePolicy":"File","ImagePullPolicy":"Always","SecurityContext":null,"Stdin":false,"StdinOnce":false,"TTY":false}],"EphemeralContainers":null,"RestartPolicy":"Never","TerminationGracePeriodSeconds":30,"ActiveDeadlineSeconds":null,"DNSPolicy":"ClusterFirst","NodeSelector":null,"ServiceAccountName":"","DeprecatedServiceAccount":"","AutomountServiceAccountToken":null,"NodeName":"","HostNetwork":false,"HostPID":false,"HostIPC":false,"ShareProcessNamespace":null,"SecurityContext":{"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":null,"RunAsGroup":null,"RunAsNonRoot":null,"SupplementalGroups":null,"SupplementalGroupsPolicy":null,"FSGroup":null,"Sysctls":null,"FSGroupChangePolicy":null,"SeccompProfile":null,"AppArmorProfile":null,"SELinuxChangePolicy":null},"ImagePullSecrets":null,"Hostname":"","Subdomain":"","Affinity":null,"SchedulerName":"default-scheduler","Tolerations":null,"HostAliases":null,"PriorityClassName":"","Priority":null,"DNSConfig":null,"ReadinessGates":null,"RuntimeClassName":null,"EnableServiceLinks":null,"PreemptionPolicy":null,"Overhead":null,"TopologySpreadConstraints":null,"SetHostnameAsFQDN":null,"OS":null,"HostUsers":null,"SchedulingGates":null,"ResourceClaims":null,"Resources":null,"HostnameOverride":null,"SchedulingGroup":null,"EvictionResponders":null}}: field is immutable`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if sourceVersion != "v1.37.2" {
		t.Errorf("table read from %s", sourceVersion)
	}
}

// TestDiff: kube-apiserver v1.37.2 answered a PUT that gave an unbound
// claim (accessModes [ReadWriteOnce], 1Gi, storageClassName x,
// volumeMode Filesystem) a selector with this diff after "spec is
// immutable after creation except ...\n": internal PersistentVolumeClaimSpec
// fields, indented by one space, three lines of context.
func TestDiff(t *testing.T) {
	spec := corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		StorageClassName: ptr.To("x"),
		VolumeMode:       ptr.To(corev1.PersistentVolumeFilesystem),
	}
	changed := *spec.DeepCopy()
	changed.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
	want := `@@ -2,7 +2,11 @@
  "AccessModes": [
   "ReadWriteOnce"
  ],
- "Selector": null,
+ "Selector": {
+  "matchLabels": {
+   "a": "b"
+  }
+ },
  "Resources": {
   "Limits": null,
   "Requests": {
`
	if got := Diff(spec, changed); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
