package corev1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// RegisterOtherDefaults registers the covering defaulters of core/v1
// Node, PersistentVolume, PersistentVolumeClaim, ReplicationController,
// LimitRange and ResourceQuota, and of their lists, on s, as upstream's
// generated RegisterDefaults does for them (pkg/apis/core/v1
// zz_generated.defaults.go, kubernetes v1.37), and those of Services and
// Namespaces and the decoding of Secrets (SetObjectDefaults_Service,
// _Namespace, _Secret).
func RegisterOtherDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&corev1.Node{}, func(obj any) { SetObjectDefaults_Node(obj.(*corev1.Node)) })
	s.AddTypeDefaultingFunc(&corev1.NodeList{}, func(obj any) { SetObjectDefaults_NodeList(obj.(*corev1.NodeList)) })
	s.AddTypeDefaultingFunc(&corev1.PersistentVolume{}, func(obj any) { SetObjectDefaults_PersistentVolume(obj.(*corev1.PersistentVolume)) })
	s.AddTypeDefaultingFunc(&corev1.PersistentVolumeList{}, func(obj any) {
		SetObjectDefaults_PersistentVolumeList(obj.(*corev1.PersistentVolumeList))
	})
	s.AddTypeDefaultingFunc(&corev1.PersistentVolumeClaim{}, func(obj any) {
		SetObjectDefaults_PersistentVolumeClaim(obj.(*corev1.PersistentVolumeClaim))
	})
	s.AddTypeDefaultingFunc(&corev1.PersistentVolumeClaimList{}, func(obj any) {
		SetObjectDefaults_PersistentVolumeClaimList(obj.(*corev1.PersistentVolumeClaimList))
	})
	s.AddTypeDefaultingFunc(&corev1.ReplicationController{}, func(obj any) {
		SetObjectDefaults_ReplicationController(obj.(*corev1.ReplicationController))
	})
	s.AddTypeDefaultingFunc(&corev1.ReplicationControllerList{}, func(obj any) {
		SetObjectDefaults_ReplicationControllerList(obj.(*corev1.ReplicationControllerList))
	})
	s.AddTypeDefaultingFunc(&corev1.LimitRange{}, func(obj any) { SetObjectDefaults_LimitRange(obj.(*corev1.LimitRange)) })
	s.AddTypeDefaultingFunc(&corev1.LimitRangeList{}, func(obj any) { SetObjectDefaults_LimitRangeList(obj.(*corev1.LimitRangeList)) })
	s.AddTypeDefaultingFunc(&corev1.ResourceQuota{}, func(obj any) { SetObjectDefaults_ResourceQuota(obj.(*corev1.ResourceQuota)) })
	s.AddTypeDefaultingFunc(&corev1.ResourceQuotaList{}, func(obj any) {
		SetObjectDefaults_ResourceQuotaList(obj.(*corev1.ResourceQuotaList))
	})
	s.AddTypeDefaultingFunc(&corev1.Secret{}, func(obj any) { SetObjectDefaults_Secret(obj.(*corev1.Secret)) })
	s.AddTypeDefaultingFunc(&corev1.Service{}, func(obj any) { SetObjectDefaults_Service(obj.(*corev1.Service)) })
	s.AddTypeDefaultingFunc(&corev1.Namespace{}, func(obj any) { SetObjectDefaults_Namespace(obj.(*corev1.Namespace)) })
	s.AddTypeDefaultingFunc(&corev1.NamespaceList{}, func(obj any) { SetObjectDefaults_NamespaceList(obj.(*corev1.NamespaceList)) })
	s.AddTypeDefaultingFunc(&corev1.ServiceList{}, func(obj any) { SetObjectDefaults_ServiceList(obj.(*corev1.ServiceList)) })
	s.AddTypeDefaultingFunc(&corev1.SecretList{}, func(obj any) { SetObjectDefaults_SecretList(obj.(*corev1.SecretList)) })
	return nil
}
