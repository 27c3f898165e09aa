package apps

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	defaultsappsv1 "github.com/kapi-dev/kapi/pkg/api/defaults/appsv1"
	"github.com/kapi-dev/kapi/pkg/registry/internaljson"
)

// The expected types, paths and messages below are upstream's:
// kubernetes/kubernetes pkg/apis/apps/validation/validation.go (v1.37)
// and the apimachinery messages it uses (IsNegativeErrorMsg,
// FieldImmutableErrorMsg, IsValidPercent). Each table holds the errors
// users hit most for its kind.

// errStrings renders errors as "<type> <field>: <detail>" (what a
// Status cause carries: reason, field, message).
func errStrings(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = string(e.Type) + " " + e.Field + ": " + e.Detail
	}
	return out
}

func checkErrors(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	got := errStrings(errs)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const (
	negative         = "must be greater than or equal to 0"
	mismatch         = "`selector` does not match template `labels`"
	immutable        = "field is immutable"
	percentMsg       = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
	restartNotAlways = `supported values: "Always"`
)

func template(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25"}}},
	}
}

func selector(app string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

// validDeployment is a deployment as it reaches validation: decoded
// (defaulted).
func validDeployment() *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       appsv1.DeploymentSpec{Selector: selector("web"), Template: template("web")},
	}
	defaultsappsv1.SetObjectDefaults_Deployment(d)
	return d
}

func TestValidateDeployment(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*appsv1.Deployment)
		want   []string
	}{
		{"valid", func(*appsv1.Deployment) {}, nil},
		{"no selector", func(d *appsv1.Deployment) { d.Spec.Selector = nil }, []string{
			"FieldValueRequired spec.selector: ",
			// nil selects nothing: the template's labels do not match it
			"FieldValueInvalid spec.template.metadata.labels: " + mismatch,
		}},
		{"empty selector", func(d *appsv1.Deployment) { d.Spec.Selector = &metav1.LabelSelector{} }, []string{
			"FieldValueInvalid spec.selector: empty selector is invalid for deployment",
		}},
		{"selector does not match the template", func(d *appsv1.Deployment) { d.Spec.Template.Labels = map[string]string{"app": "other"} }, []string{
			"FieldValueInvalid spec.template.metadata.labels: " + mismatch,
		}},
		{"invalid selector value", func(d *appsv1.Deployment) { d.Spec.Selector.MatchLabels["app"] = "-web" }, []string{
			"FieldValueInvalid spec.selector.matchLabels: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
			"FieldValueInvalid spec.selector: invalid label selector",
		}},
		{"negative replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr(int32(-1)) }, []string{
			"FieldValueInvalid spec.replicas: " + negative,
		}},
		{"restartPolicy OnFailure", func(d *appsv1.Deployment) { d.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }, []string{
			"FieldValueNotSupported spec.template.spec.restartPolicy: " + restartNotAlways,
		}},
		{"activeDeadlineSeconds", func(d *appsv1.Deployment) { d.Spec.Template.Spec.ActiveDeadlineSeconds = ptr(int64(30)) }, []string{
			"FieldValueForbidden spec.template.spec.activeDeadlineSeconds: activeDeadlineSeconds in ReplicaSet is not Supported",
		}},
		{"maxUnavailable and maxSurge both 0", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxUnavailable: ptr(intstr.FromInt32(0)), MaxSurge: ptr(intstr.FromString("0%"))}
		}, []string{"FieldValueInvalid spec.strategy.rollingUpdate.maxUnavailable: may not be 0 when `maxSurge` is 0"}},
		{"maxUnavailable over 100%", func(d *appsv1.Deployment) {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr(intstr.FromString("150%"))
		}, []string{
			"FieldValueInvalid spec.strategy.rollingUpdate.maxUnavailable: must not be greater than 100%",
		}},
		{"maxSurge not a percentage", func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptr(intstr.FromString("25")) }, []string{
			"FieldValueInvalid spec.strategy.rollingUpdate.maxSurge: " + percentMsg,
		}},
		{"negative maxSurge", func(d *appsv1.Deployment) { d.Spec.Strategy.RollingUpdate.MaxSurge = ptr(intstr.FromInt32(-1)) }, []string{
			"FieldValueInvalid spec.strategy.rollingUpdate.maxSurge: " + negative,
		}},
		{"Recreate with rollingUpdate", func(d *appsv1.Deployment) { d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType }, []string{
			"FieldValueForbidden spec.strategy.rollingUpdate: may not be specified when strategy `type` is 'Recreate'",
		}},
		{"unknown strategy", func(d *appsv1.Deployment) { d.Spec.Strategy.Type = "BlueGreen" }, []string{
			`FieldValueNotSupported spec.strategy: supported values: "Recreate", "RollingUpdate"`,
		}},
		{"progressDeadlineSeconds not above minReadySeconds", func(d *appsv1.Deployment) {
			d.Spec.MinReadySeconds = 600
		}, []string{"FieldValueInvalid spec.progressDeadlineSeconds: must be greater than minReadySeconds"}},
		{"negative revisionHistoryLimit and minReadySeconds", func(d *appsv1.Deployment) {
			d.Spec.RevisionHistoryLimit = ptr(int32(-1))
			d.Spec.MinReadySeconds = -1
		}, []string{
			"FieldValueInvalid spec.minReadySeconds: " + negative,
			"FieldValueInvalid spec.revisionHistoryLimit: " + negative,
		}},
		{"finalizer not qualified", func(d *appsv1.Deployment) { d.Finalizers = []string{"mine"} }, []string{
			"FieldValueInvalid metadata.finalizers[0]: name is neither a standard finalizer name nor is it fully qualified",
		}},
		{"negative rollback annotation", func(d *appsv1.Deployment) {
			d.Annotations = map[string]string{appsv1.DeprecatedRollbackTo: "-2"}
		}, []string{"FieldValueInvalid spec.rollback.version: " + negative}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := validDeployment()
			tc.mutate(d)
			checkErrors(t, ValidateDeploymentFields(d, PodValidationOptions{}), tc.want)
		})
	}
}

func TestValidateDeploymentUpdate(t *testing.T) {
	old := validDeployment()
	d := old.DeepCopy()
	d.Spec.Selector = selector("web2")
	d.Spec.Template.Labels["app"] = "web2"
	checkErrors(t, ValidateDeploymentUpdateFields(d, old, PodValidationOptions{}), []string{
		"FieldValueInvalid spec.selector: " + immutable,
	})
	d = old.DeepCopy()
	d.Spec.Replicas = ptr(int32(5))
	d.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
	checkErrors(t, ValidateDeploymentUpdateFields(d, old, PodValidationOptions{}), nil)
}

func TestValidateDeploymentStatus(t *testing.T) {
	old := validDeployment()
	old.Status.CollisionCount = ptr(int32(2))
	d := old.DeepCopy()
	d.Status = appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 2, AvailableReplicas: 3, UpdatedReplicas: 2, ObservedGeneration: -1, CollisionCount: ptr(int32(1))}
	checkErrors(t, ValidateDeploymentStatusUpdateFields(d, old), []string{
		"FieldValueInvalid status.observedGeneration: " + negative,
		"FieldValueInvalid status.updatedReplicas: cannot be greater than status.replicas",
		"FieldValueInvalid status.readyReplicas: cannot be greater than status.replicas",
		"FieldValueInvalid status.availableReplicas: cannot be greater than status.replicas",
		"FieldValueInvalid status.availableReplicas: cannot be greater than readyReplicas",
		"FieldValueInvalid status.collisionCount: cannot be decremented",
	})
}

func validReplicaSet() *appsv1.ReplicaSet {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       appsv1.ReplicaSetSpec{Selector: selector("web"), Template: template("web")},
	}
	defaultsappsv1.SetObjectDefaults_ReplicaSet(rs)
	return rs
}

func TestValidateReplicaSet(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*appsv1.ReplicaSet)
		want   []string
	}{
		{"valid", func(*appsv1.ReplicaSet) {}, nil},
		{"no selector", func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = nil }, []string{
			"FieldValueRequired spec.selector: ",
			"FieldValueInvalid spec.template.metadata.labels: " + mismatch,
		}},
		// upstream's message names deployments here too
		{"empty selector", func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = &metav1.LabelSelector{} }, []string{
			"FieldValueInvalid spec.selector: empty selector is invalid for deployment",
		}},
		{"selector does not match the template", func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Labels = nil }, []string{
			"FieldValueInvalid spec.template.metadata.labels: " + mismatch,
		}},
		{"invalid selector operator", func(rs *appsv1.ReplicaSet) {
			rs.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}
		}, []string{
			"FieldValueInvalid spec.selector.matchExpressions[0].operator: not a valid selector operator",
			"FieldValueInvalid spec.selector: invalid label selector",
		}},
		{"negative replicas", func(rs *appsv1.ReplicaSet) { rs.Spec.Replicas = ptr(int32(-3)) }, []string{
			"FieldValueInvalid spec.replicas: " + negative,
		}},
		{"negative minReadySeconds", func(rs *appsv1.ReplicaSet) { rs.Spec.MinReadySeconds = -1 }, []string{
			"FieldValueInvalid spec.minReadySeconds: " + negative,
		}},
		{"restartPolicy Never", func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }, []string{
			"FieldValueNotSupported spec.template.spec.restartPolicy: " + restartNotAlways,
		}},
		{"activeDeadlineSeconds", func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.ActiveDeadlineSeconds = ptr(int64(1)) }, []string{
			"FieldValueForbidden spec.template.spec.activeDeadlineSeconds: activeDeadlineSeconds in ReplicaSet is not Supported",
		}},
		{"finalizer not qualified", func(rs *appsv1.ReplicaSet) { rs.Finalizers = []string{"x"} }, []string{
			"FieldValueInvalid metadata.finalizers[0]: name is neither a standard finalizer name nor is it fully qualified",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := validReplicaSet()
			tc.mutate(rs)
			checkErrors(t, ValidateReplicaSetFields(rs, PodValidationOptions{}), tc.want)
		})
	}

	old := validReplicaSet()
	rs := old.DeepCopy()
	rs.Spec.Selector.MatchLabels["tier"] = "x"
	rs.Spec.Template.Labels["tier"] = "x"
	checkErrors(t, ValidateReplicaSetUpdateFields(rs, old, PodValidationOptions{}), []string{"FieldValueInvalid spec.selector: " + immutable})

	rs = old.DeepCopy()
	rs.Status = appsv1.ReplicaSetStatus{Replicas: -1, FullyLabeledReplicas: 2, TerminatingReplicas: ptr(int32(-1))}
	checkErrors(t, ValidateReplicaSetStatusUpdateFields(rs, old), []string{
		"FieldValueInvalid status.replicas: " + negative,
		"FieldValueInvalid status.terminatingReplicas: " + negative,
		"FieldValueInvalid status.fullyLabeledReplicas: cannot be greater than status.replicas",
		"FieldValueInvalid status.readyReplicas: cannot be greater than status.replicas",
		"FieldValueInvalid status.availableReplicas: cannot be greater than status.replicas",
	})
}

func validStatefulSet() *appsv1.StatefulSet {
	ss := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec:       appsv1.StatefulSetSpec{Selector: selector("db"), Template: template("db"), ServiceName: "db"},
	}
	defaultsappsv1.SetObjectDefaults_StatefulSet(ss)
	return ss
}

func TestValidateStatefulSet(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*appsv1.StatefulSet)
		want   []string
	}{
		{"valid", func(*appsv1.StatefulSet) {}, nil},
		{"no selector", func(ss *appsv1.StatefulSet) { ss.Spec.Selector = nil }, []string{
			"FieldValueRequired spec.selector: ",
			"FieldValueInvalid spec.template.metadata.labels: " + mismatch,
		}},
		{"empty selector", func(ss *appsv1.StatefulSet) { ss.Spec.Selector = &metav1.LabelSelector{} }, []string{
			"FieldValueInvalid spec.selector: empty selector is invalid for statefulset",
		}},
		{"selector does not match the template", func(ss *appsv1.StatefulSet) { ss.Spec.Template.Labels["app"] = "web" }, []string{
			"FieldValueInvalid spec.template.metadata.labels: " + mismatch,
		}},
		{"negative replicas", func(ss *appsv1.StatefulSet) { ss.Spec.Replicas = ptr(int32(-1)) }, []string{
			"FieldValueInvalid spec.replicas: " + negative,
		}},
		{"unknown podManagementPolicy", func(ss *appsv1.StatefulSet) { ss.Spec.PodManagementPolicy = "Random" }, []string{
			"FieldValueInvalid spec.podManagementPolicy: must be 'OrderedReady' or 'Parallel'",
		}},
		{"OnDelete with rollingUpdate", func(ss *appsv1.StatefulSet) { ss.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType }, []string{
			"FieldValueInvalid spec.updateStrategy.rollingUpdate: only allowed for updateStrategy 'RollingUpdate'",
		}},
		{"Recreate (gate off in v1.37)", func(ss *appsv1.StatefulSet) {
			ss.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RecreateStatefulSetStrategyType}
		}, []string{"FieldValueInvalid spec.updateStrategy: must be 'RollingUpdate' or 'OnDelete'"}},
		{"negative partition, maxUnavailable 0", func(ss *appsv1.StatefulSet) {
			ss.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr(int32(-1)), MaxUnavailable: ptr(intstr.FromInt32(0))}
		}, []string{
			"FieldValueInvalid spec.updateStrategy.rollingUpdate.partition: " + negative,
			"FieldValueInvalid spec.updateStrategy.rollingUpdate.maxUnavailable: cannot be 0",
		}},
		{"restartPolicy OnFailure", func(ss *appsv1.StatefulSet) { ss.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }, []string{
			"FieldValueNotSupported spec.template.spec.restartPolicy: " + restartNotAlways,
		}},
		{"activeDeadlineSeconds", func(ss *appsv1.StatefulSet) { ss.Spec.Template.Spec.ActiveDeadlineSeconds = ptr(int64(5)) }, []string{
			"FieldValueForbidden spec.template.spec.activeDeadlineSeconds: activeDeadlineSeconds in StatefulSet is not Supported",
		}},
		{"unknown retention policy", func(ss *appsv1.StatefulSet) { ss.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = "Keep" }, []string{
			`FieldValueNotSupported spec.persistentVolumeClaimRetentionPolicy.whenDeleted: supported values: "Retain", "Delete"`,
		}},
		{"negative ordinals.start", func(ss *appsv1.StatefulSet) { ss.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: -1} }, []string{
			"FieldValueInvalid spec.ordinals.start: " + negative,
		}},
		// Twice, as upstream's ValidateStatefulSet returns it (once by the
		// pod template check, once by the statefulset's own); the store
		// reports it once.
		{"invalid template label", func(ss *appsv1.StatefulSet) {
			ss.Spec.Template.Labels["bad key!"] = "x"
		}, []string{
			"FieldValueInvalid spec.template.labels: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
			"FieldValueInvalid spec.template.labels: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss := validStatefulSet()
			tc.mutate(ss)
			checkErrors(t, ValidateStatefulSetFields(ss, PodValidationOptions{}), tc.want)
		})
	}
}

func TestValidateStatefulSetUpdate(t *testing.T) {
	old := validStatefulSet()
	ss := old.DeepCopy()
	ss.Spec.Replicas = ptr(int32(3))
	ss.Spec.Template.Spec.Containers[0].Image = "nginx:1.26"
	ss.Spec.MinReadySeconds = 10
	ss.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
	checkErrors(t, ValidateStatefulSetUpdateFields(ss, old, PodValidationOptions{}), nil)

	ss = old.DeepCopy()
	ss.Spec.ServiceName = "other"
	ss.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	// v1.37: each immutable field says so (kube-apiserver v1.37.2 answers
	// these two errors to the same change).
	checkErrors(t, ValidateStatefulSetUpdateFields(ss, old, PodValidationOptions{}), []string{
		"FieldValueInvalid spec.serviceName: field is immutable",
		"FieldValueInvalid spec.podManagementPolicy: field is immutable",
	})

	ss = old.DeepCopy()
	ss.Status = appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 2, CurrentReplicas: 3}
	checkErrors(t, ValidateStatefulSetStatusUpdateFields(ss, old), []string{
		"FieldValueInvalid status.currentReplicas: cannot be greater than status.replicas",
		"FieldValueInvalid status.availableReplicas: cannot be greater than status.replicas",
		"FieldValueInvalid status.availableReplicas: cannot be greater than status.readyReplicas",
	})
}

func validDaemonSet() *appsv1.DaemonSet {
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "default",
			Annotations: map[string]string{appsv1.DeprecatedTemplateGeneration: "1"}},
		Spec: appsv1.DaemonSetSpec{Selector: selector("agent"), Template: template("agent")},
	}
	defaultsappsv1.SetObjectDefaults_DaemonSet(ds)
	return ds
}

func TestValidateDaemonSet(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*appsv1.DaemonSet)
		want   []string
	}{
		{"valid", func(*appsv1.DaemonSet) {}, nil},
		// unlike the other workloads: no Required error
		{"no selector", func(ds *appsv1.DaemonSet) { ds.Spec.Selector = nil }, []string{
			"FieldValueInvalid spec.template.metadata.labels: " + mismatch,
		}},
		{"empty selector", func(ds *appsv1.DaemonSet) { ds.Spec.Selector = &metav1.LabelSelector{} }, []string{
			"FieldValueInvalid spec.selector: empty selector is invalid for daemonset",
		}},
		{"selector does not match the template", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Labels = map[string]string{"x": "y"} }, []string{
			"FieldValueInvalid spec.template.metadata.labels: " + mismatch,
		}},
		{"restartPolicy Never", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever }, []string{
			"FieldValueNotSupported spec.template.spec.restartPolicy: " + restartNotAlways,
		}},
		{"activeDeadlineSeconds", func(ds *appsv1.DaemonSet) { ds.Spec.Template.Spec.ActiveDeadlineSeconds = ptr(int64(5)) }, []string{
			"FieldValueForbidden spec.template.spec.activeDeadlineSeconds: activeDeadlineSeconds in DaemonSet is not Supported",
		}},
		{"maxUnavailable and maxSurge both set", func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxSurge = ptr(intstr.FromInt32(1))
		}, []string{"FieldValueInvalid spec.updateStrategy.rollingUpdate.maxSurge: may not be set when maxUnavailable is non-zero"}},
		{"maxUnavailable and maxSurge both 0", func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = ptr(intstr.FromString("0%"))
		}, []string{"FieldValueRequired spec.updateStrategy.rollingUpdate.maxUnavailable: cannot be 0 when maxSurge is 0"}},
		{"maxSurge over 100%", func(ds *appsv1.DaemonSet) {
			ds.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr(intstr.FromInt32(0)), MaxSurge: ptr(intstr.FromString("101%"))}
		}, []string{"FieldValueInvalid spec.updateStrategy.rollingUpdate.maxSurge: must not be greater than 100%"}},
		{"unknown update strategy", func(ds *appsv1.DaemonSet) { ds.Spec.UpdateStrategy.Type = "Recreate" }, []string{
			`FieldValueNotSupported spec.updateStrategy: supported values: "RollingUpdate", "OnDelete"`,
		}},
		{"negative minReadySeconds and revisionHistoryLimit", func(ds *appsv1.DaemonSet) {
			ds.Spec.MinReadySeconds = -1
			ds.Spec.RevisionHistoryLimit = ptr(int32(-1))
		}, []string{
			"FieldValueInvalid spec.minReadySeconds: " + negative,
			"FieldValueInvalid spec.revisionHistoryLimit: " + negative,
		}},
		{"template generation not an integer", func(ds *appsv1.DaemonSet) {
			ds.Annotations[appsv1.DeprecatedTemplateGeneration] = "one"
		}, []string{`FieldValueInvalid metadata.annotations[deprecated.daemonset.template.generation]: strconv.ParseInt: parsing "one": invalid syntax`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ds := validDaemonSet()
			tc.mutate(ds)
			checkErrors(t, ValidateDaemonSetFields(ds, PodValidationOptions{}), tc.want)
		})
	}
}

func TestValidateDaemonSetUpdate(t *testing.T) {
	old := validDaemonSet()
	set := func(ds *appsv1.DaemonSet, gen string) { ds.Annotations[appsv1.DeprecatedTemplateGeneration] = gen }

	ds := old.DeepCopy()
	ds.Spec.Template.Spec.Containers[0].Image = "busybox"
	set(ds, "2")
	checkErrors(t, ValidateDaemonSetUpdateFields(ds, old, PodValidationOptions{}), nil)

	set(ds, "1")
	checkErrors(t, ValidateDaemonSetUpdateFields(ds, old, PodValidationOptions{}), []string{
		"FieldValueInvalid spec.templateGeneration: must be incremented upon template update",
	})
	ds = old.DeepCopy()
	set(ds, "3")
	checkErrors(t, ValidateDaemonSetUpdateFields(ds, old, PodValidationOptions{}), []string{
		"FieldValueInvalid spec.templateGeneration: must not be incremented without template update",
	})
	ds = old.DeepCopy()
	ds.Spec.Selector.MatchLabels["tier"] = "x"
	ds.Spec.Template.Labels["tier"] = "x"
	set(ds, "2")
	checkErrors(t, ValidateDaemonSetUpdateFields(ds, old, PodValidationOptions{}), []string{
		"FieldValueInvalid spec.selector: " + immutable,
	})
	// The update's rules first, then the spec's: kube-apiserver v1.37.2's
	// order for a changed selector with a bad update strategy.
	ds = old.DeepCopy()
	ds.Spec.Selector.MatchLabels["tier"] = "x"
	ds.Spec.Template.Labels["tier"] = "x"
	ds.Spec.UpdateStrategy.Type = "Bogus"
	set(ds, "2")
	got := errStrings(ValidateDaemonSetUpdateFields(ds, old, PodValidationOptions{}))
	if len(got) < 2 || !strings.HasPrefix(got[0], "FieldValueInvalid spec.selector") || !strings.HasPrefix(got[len(got)-1], "FieldValueNotSupported spec.updateStrategy") {
		t.Errorf("update errors %q: want the selector's first and the strategy's last", got)
	}

	ds = old.DeepCopy()
	ds.Status.NumberReady = -1
	checkErrors(t, ValidateDaemonSetStatusUpdateFields(ds, old), []string{"FieldValueInvalid status.numberReady: " + negative})
}

func TestValidateControllerRevision(t *testing.T) {
	valid := func() *appsv1.ControllerRevision {
		return &appsv1.ControllerRevision{
			ObjectMeta: metav1.ObjectMeta{Name: "db-7d5b8c", Namespace: "default"},
			Data:       runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"metadata":{"labels":{"app":"db"}}}}}`)},
			Revision:   1,
		}
	}
	checkErrors(t, ValidateControllerRevisionFields(valid()), nil)
	r := valid()
	r.Data = runtime.RawExtension{}
	r.Revision = -1
	checkErrors(t, ValidateControllerRevisionFields(r), []string{
		"FieldValueRequired data: data is mandatory",
		"FieldValueInvalid revision: " + negative,
	})

	old := valid()
	r = valid()
	r.Data.Raw = []byte(` { "spec" : {"template":{"metadata":{"labels":{"app":"db"}}}} }`) // the same value
	r.Labels = map[string]string{"a": "b"}
	checkErrors(t, ValidateControllerRevisionUpdateFields(r, old), nil)
	r.Data.Raw = []byte(`{"spec":{}}`)
	checkErrors(t, ValidateControllerRevisionUpdateFields(r, old), []string{"FieldValueInvalid data: " + immutable})
}

// The full validators add the generic metadata rules and the kind's name
// rule: statefulset names are DNS labels, the others DNS subdomains.
func TestValidateNames(t *testing.T) {
	ss := validStatefulSet()
	ss.Name = "db.v1"
	checkErrors(t, ValidateStatefulSet(ss, PodValidationOptions{}), []string{
		"FieldValueInvalid metadata.name: must not contain dots",
	})
	d := validDeployment()
	d.Name = "web.v1"
	checkErrors(t, ValidateDeployment(d, PodValidationOptions{}), nil)
	d.Name = "Web"
	if errs := ValidateDeployment(d, PodValidationOptions{}); len(errs) != 1 || errs[0].Field != "metadata.name" {
		t.Errorf("got %v, want one error at metadata.name", errs)
	}
}

func ptr[T any](v T) *T { return &v }

// Workload templates are validated as pod templates (core's
// ValidatePodTemplateSpec), except a statefulset's, whose pod spec
// upstream leaves unchecked (only its labels and annotations).
func TestValidateTemplates(t *testing.T) {
	noImage := func(s *corev1.PodSpec) { s.Containers[0].Image = "" }
	d := validDeployment()
	noImage(&d.Spec.Template.Spec)
	d.Spec.Template.Spec.RestartPolicy = "Sometimes"
	checkErrors(t, ValidateDeploymentFields(d, PodValidationOptions{}), []string{
		"FieldValueRequired spec.template.spec.containers[0].image: ",
		`FieldValueNotSupported spec.template.spec.restartPolicy: supported values: "Always", "OnFailure", "Never"`,
		"FieldValueNotSupported spec.template.spec.restartPolicy: " + restartNotAlways,
	})

	rs := validReplicaSet()
	rs.Spec.Template.Spec.Containers = append(rs.Spec.Template.Spec.Containers, rs.Spec.Template.Spec.Containers[0])
	rs.Spec.Template.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "busybox", ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile}}}
	errs := ValidateReplicaSetFields(rs, PodValidationOptions{})
	got := strings.Join(errStrings(errs), "\n")
	for _, want := range []string{"FieldValueDuplicate spec.template.spec.containers[1].name: ",
		"FieldValueForbidden spec.template.spec.ephemeralContainers: ephemeral containers not allowed in pod template"} {
		if !strings.Contains(got, want) {
			t.Errorf("replicaset: got errors\n%s\nwant %q among them", got, want)
		}
	}

	ds := validDaemonSet()
	ds.Spec.Template.Spec.Containers = nil
	checkErrors(t, ValidateDaemonSetFields(ds, PodValidationOptions{}), []string{"FieldValueRequired spec.template.spec.containers: "})

	// v1.37 validates a statefulset's pod template as a pod template.
	ss := validStatefulSet()
	noImage(&ss.Spec.Template.Spec)
	checkErrors(t, ValidateStatefulSetFields(ss, PodValidationOptions{}), []string{"FieldValueRequired spec.template.spec.containers[0].image: "})
	ss.Spec.Template.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	// The annotation error twice, as upstream's function returns it (the
	// store reports it once).
	checkErrors(t, ValidateStatefulSetFields(ss, PodValidationOptions{}), []string{
		"FieldValueInvalid spec.template.annotations[kubernetes.io/config.mirror]: must set spec.nodeName if mirror pod annotation is set",
		"FieldValueRequired spec.template.spec.containers[0].image: ",
		"FieldValueInvalid spec.template.annotations[kubernetes.io/config.mirror]: must set spec.nodeName if mirror pod annotation is set",
	})
}

// v1.37's statefulset template rules beyond a pod template's: mounts may
// name a claim template (the controller adds its volume), hostname and
// subdomain are the controller's, and an update of a statefulset whose
// stored template is invalid is not refused for it (nor for its claim
// templates, which are immutable).
func TestStatefulSetTemplateAsUpstream(t *testing.T) {
	ss := validStatefulSet()
	ss.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}}
	ss.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/d"}}
	ss.Spec.Template.Spec.Hostname = "Not_A_Label"
	checkErrors(t, ValidateStatefulSetFields(ss, PodValidationOptions{}), nil)

	bad := ss.DeepCopy()
	bad.Spec.VolumeClaimTemplates[0].Spec.AccessModes = nil
	checkErrors(t, ValidateStatefulSetFields(bad, PodValidationOptions{}), []string{
		"FieldValueRequired spec.volumeClaimTemplates[0].spec.accessModes: at least 1 access mode is required",
	})

	old := ss.DeepCopy()
	old.Spec.Template.Spec.Containers[0].Image = ""
	upd := old.DeepCopy()
	upd.Spec.Replicas = ptr(int32(4))
	checkErrors(t, ValidateStatefulSetUpdateFields(upd, old, PodValidationOptions{}), nil)
	ss.Spec.Template.Spec.Containers[0].Image = ""
	checkErrors(t, ValidateStatefulSetUpdateFields(ss, validStatefulSetWithClaim(), PodValidationOptions{}), []string{
		"FieldValueRequired spec.template.spec.containers[0].image: ",
	})
}

func validStatefulSetWithClaim() *appsv1.StatefulSet {
	ss := validStatefulSet()
	ss.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}}
	ss.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/d"}}
	return ss
}

// TestStatefulSetClaimTemplatesValue: a changed claim template's error
// shows the templates without apiVersion and kind, as upstream's internal
// ones (kube-apiserver v1.37.2 answered spec.volumeClaimTemplates: Invalid
// value: [{"name":"v","Spec":{...},"Status":{"Phase":"Pending",...}}]).
func TestStatefulSetClaimTemplatesValue(t *testing.T) {
	old := validStatefulSet()
	old.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		TypeMeta:   metav1.TypeMeta{Kind: "PersistentVolumeClaim", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{Name: "v"},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}}
	ss := old.DeepCopy()
	ss.Spec.VolumeClaimTemplates[0].Spec.VolumeName = "pv"
	errs := ValidateStatefulSetUpdateFields(ss, old, PodValidationOptions{})
	if len(errs) != 1 {
		t.Fatalf("got %v", errs)
	}
	got := field.Invalid(field.NewPath("spec", "volumeClaimTemplates"), internaljson.Value(errs[0].BadValue), "field is immutable").Error()
	want := `spec.volumeClaimTemplates: Invalid value: [{"name":"v","Spec":{"AccessModes":null,"Selector":null,"Resources":{"Limits":null,"Requests":null},"VolumeName":"pv",`
	if !strings.HasPrefix(got, want) {
		t.Errorf("got  %s\nwant %s...", got, want)
	}
	if old.Spec.VolumeClaimTemplates[0].Kind == "" || ss.Spec.VolumeClaimTemplates[0].Kind == "" {
		t.Error("the objects' templates were changed")
	}
}
