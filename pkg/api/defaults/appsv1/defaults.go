package appsv1

import (
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The names below follow upstream's defaulter-gen convention
// (SetDefaults_<Type> for one type, SetObjectDefaults_<Type> for a type
// and everything nested in it), so that callers can find their upstream
// counterparts.

// RegisterDefaults registers the defaulting functions of the apps/v1
// top-level types and their lists on s.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&appsv1.Deployment{}, func(obj any) { SetObjectDefaults_Deployment(obj.(*appsv1.Deployment)) })
	s.AddTypeDefaultingFunc(&appsv1.DeploymentList{}, func(obj any) { SetObjectDefaults_DeploymentList(obj.(*appsv1.DeploymentList)) })
	s.AddTypeDefaultingFunc(&appsv1.ReplicaSet{}, func(obj any) { SetObjectDefaults_ReplicaSet(obj.(*appsv1.ReplicaSet)) })
	s.AddTypeDefaultingFunc(&appsv1.ReplicaSetList{}, func(obj any) { SetObjectDefaults_ReplicaSetList(obj.(*appsv1.ReplicaSetList)) })
	s.AddTypeDefaultingFunc(&appsv1.StatefulSet{}, func(obj any) { SetObjectDefaults_StatefulSet(obj.(*appsv1.StatefulSet)) })
	s.AddTypeDefaultingFunc(&appsv1.StatefulSetList{}, func(obj any) { SetObjectDefaults_StatefulSetList(obj.(*appsv1.StatefulSetList)) })
	s.AddTypeDefaultingFunc(&appsv1.DaemonSet{}, func(obj any) { SetObjectDefaults_DaemonSet(obj.(*appsv1.DaemonSet)) })
	s.AddTypeDefaultingFunc(&appsv1.DaemonSetList{}, func(obj any) { SetObjectDefaults_DaemonSetList(obj.(*appsv1.DaemonSetList)) })
	return nil
}

// SetDefaults_Deployment: replicas 1; strategy RollingUpdate with
// maxUnavailable and maxSurge 25%; revisionHistoryLimit 10;
// progressDeadlineSeconds 600.
func SetDefaults_Deployment(obj *appsv1.Deployment) {
	spec := &obj.Spec
	if spec.Replicas == nil {
		spec.Replicas = ptr(int32(1))
	}
	if spec.Strategy.Type == "" {
		spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if spec.Strategy.RollingUpdate == nil {
			spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		ru := spec.Strategy.RollingUpdate
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = ptr(intstr.FromString("25%"))
		}
		if ru.MaxSurge == nil {
			ru.MaxSurge = ptr(intstr.FromString("25%"))
		}
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr(int32(10))
	}
	if spec.ProgressDeadlineSeconds == nil {
		spec.ProgressDeadlineSeconds = ptr(int32(600))
	}
}

// SetDefaults_ReplicaSet: replicas 1.
func SetDefaults_ReplicaSet(obj *appsv1.ReplicaSet) {
	if obj.Spec.Replicas == nil {
		obj.Spec.Replicas = ptr(int32(1))
	}
}

// SetDefaults_StatefulSet: podManagementPolicy OrderedReady; updateStrategy
// RollingUpdate (a rollingUpdate block only when the type was empty), its
// partition 0 and maxUnavailable 1 (the MaxUnavailableStatefulSet gate is
// on by default in v1.37); persistentVolumeClaimRetentionPolicy
// Retain/Retain (StatefulSetAutoDeletePVC is GA); replicas 1;
// revisionHistoryLimit 10.
func SetDefaults_StatefulSet(obj *appsv1.StatefulSet) {
	spec := &obj.Spec
	if spec.PodManagementPolicy == "" {
		spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if spec.UpdateStrategy.Type == "" {
		spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if spec.UpdateStrategy.RollingUpdate == nil {
			spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if ru := spec.UpdateStrategy.RollingUpdate; spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && ru != nil {
		if ru.Partition == nil {
			ru.Partition = ptr(int32(0))
		}
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = ptr(intstr.FromInt32(1))
		}
	}
	if spec.PersistentVolumeClaimRetentionPolicy == nil {
		spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
		p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if p := spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
		p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if spec.Replicas == nil {
		spec.Replicas = ptr(int32(1))
	}
	if spec.RevisionHistoryLimit == nil {
		spec.RevisionHistoryLimit = ptr(int32(10))
	}
}

// SetDefaults_DaemonSet: updateStrategy RollingUpdate with maxUnavailable
// 1 and maxSurge 0 (0 for both of another type's rollingUpdate);
// revisionHistoryLimit 10.
func SetDefaults_DaemonSet(obj *appsv1.DaemonSet) {
	s := &obj.Spec.UpdateStrategy
	if s.Type == "" {
		s.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if s.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if s.RollingUpdate == nil {
			s.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if s.RollingUpdate.MaxUnavailable == nil {
			s.RollingUpdate.MaxUnavailable = ptr(intstr.FromInt32(1))
		}
		if s.RollingUpdate.MaxSurge == nil {
			s.RollingUpdate.MaxSurge = ptr(intstr.FromInt32(0))
		}
	}
	// Upstream's internal RollingUpdateDaemonSet holds both as values, so
	// the rollingUpdate of any other strategy type reads back with 0 for
	// either left out (its conversion, at decoding).
	if ru := s.RollingUpdate; ru != nil {
		if ru.MaxUnavailable == nil {
			ru.MaxUnavailable = ptr(intstr.FromInt32(0))
		}
		if ru.MaxSurge == nil {
			ru.MaxSurge = ptr(intstr.FromInt32(0))
		}
	}
	if obj.Spec.RevisionHistoryLimit == nil {
		obj.Spec.RevisionHistoryLimit = ptr(int32(10))
	}
	defaultTemplateGeneration(obj)
}

// defaultTemplateGeneration writes the template generation annotation as
// upstream's decoding leaves it. Upstream holds the template generation in
// its internal spec (an int64, 0 when the annotation is missing) and its
// conversion back to apps/v1 always writes the annotation
// (Convert_apps_DaemonSet_To_v1_DaemonSet, k8s.io/kubernetes
// pkg/apis/apps/v1/conversion.go, v1.37.2): a body without it reads as "0"
// (so the writer's managed fields own it, as upstream's do; the strategy
// then sets the real generation), and an integer reads in its canonical
// form ("007" is "7"). A value that is not an integer is left for the
// request handlers to refuse, as upstream's conversion does.
func defaultTemplateGeneration(obj *appsv1.DaemonSet) {
	v, ok := obj.Annotations[appsv1.DeprecatedTemplateGeneration]
	gen, err := strconv.ParseInt(v, 10, 64)
	switch {
	case !ok:
		gen = 0
	case err != nil, strconv.FormatInt(gen, 10) == v:
		return
	}
	annotations := make(map[string]string, len(obj.Annotations)+1)
	for k, val := range obj.Annotations {
		annotations[k] = val
	}
	annotations[appsv1.DeprecatedTemplateGeneration] = strconv.FormatInt(gen, 10)
	obj.Annotations = annotations
}

// SetObjectDefaults_Deployment defaults a Deployment and its pod template.
func SetObjectDefaults_Deployment(obj *appsv1.Deployment) {
	SetDefaults_Deployment(obj)
	defaultPodTemplate(&obj.Spec.Template)
}

// SetObjectDefaults_DeploymentList defaults every item.
func SetObjectDefaults_DeploymentList(list *appsv1.DeploymentList) {
	for i := range list.Items {
		SetObjectDefaults_Deployment(&list.Items[i])
	}
}

// SetObjectDefaults_ReplicaSet defaults a ReplicaSet and its pod template.
func SetObjectDefaults_ReplicaSet(obj *appsv1.ReplicaSet) {
	SetDefaults_ReplicaSet(obj)
	defaultPodTemplate(&obj.Spec.Template)
}

// SetObjectDefaults_ReplicaSetList defaults every item.
func SetObjectDefaults_ReplicaSetList(list *appsv1.ReplicaSetList) {
	for i := range list.Items {
		SetObjectDefaults_ReplicaSet(&list.Items[i])
	}
}

// SetObjectDefaults_StatefulSet defaults a StatefulSet, its pod template
// and its volume claim templates.
//
// Each volume claim template also gets apiVersion v1 and kind
// PersistentVolumeClaim, whatever the request said: upstream clears them
// when it converts to its internal version and sets them when it converts
// back to apps/v1 for storage and responses (kubernetes v1.37
// pkg/apis/apps/v1/conversion.go, Convert_apps_StatefulSetSpec_To_v1_StatefulSetSpec,
// "to behave the same as reflective conversion < 1.17", issue 87583).
// Defaulting runs where upstream converts: when a request body and an
// object read from storage are decoded (protobuf, which kapi stores, has
// no TypeMeta for them).
func SetObjectDefaults_StatefulSet(obj *appsv1.StatefulSet) {
	SetDefaults_StatefulSet(obj)
	defaultPodTemplate(&obj.Spec.Template)
	for i := range obj.Spec.VolumeClaimTemplates {
		t := &obj.Spec.VolumeClaimTemplates[i]
		defaultClaimTemplate(t)
		t.APIVersion, t.Kind = "v1", "PersistentVolumeClaim"
	}
}

// SetObjectDefaults_StatefulSetList defaults every item.
func SetObjectDefaults_StatefulSetList(list *appsv1.StatefulSetList) {
	for i := range list.Items {
		SetObjectDefaults_StatefulSet(&list.Items[i])
	}
}

// SetObjectDefaults_DaemonSet defaults a DaemonSet and its pod template.
func SetObjectDefaults_DaemonSet(obj *appsv1.DaemonSet) {
	SetDefaults_DaemonSet(obj)
	defaultPodTemplate(&obj.Spec.Template)
}

// SetObjectDefaults_DaemonSetList defaults every item.
func SetObjectDefaults_DaemonSetList(list *appsv1.DaemonSetList) {
	for i := range list.Items {
		SetObjectDefaults_DaemonSet(&list.Items[i])
	}
}

func ptr[T any](v T) *T { return &v }
