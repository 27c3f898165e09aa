package corev1

import (
	corev1 "k8s.io/api/core/v1"
)

// SetObjectDefaults_Namespace applies v1.37's SetDefaults_Namespace and
// SetDefaults_NamespaceStatus (pkg/apis/core/v1/defaults.go) when a
// Namespace is decoded: the label kubernetes.io/metadata.name is the name
// (not for a namespace without one, made with generateName; the registry's
// Canonicalize sets it then), and an empty phase is Active. The field
// manager thus records the label, as upstream's does.
func SetObjectDefaults_Namespace(ns *corev1.Namespace) {
	if ns.Name != "" {
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[corev1.LabelMetadataName] = ns.Name
	}
	if ns.Status.Phase == "" {
		ns.Status.Phase = corev1.NamespaceActive
	}
}

// SetObjectDefaults_NamespaceList defaults each item as SetObjectDefaults_Namespace.
func SetObjectDefaults_NamespaceList(l *corev1.NamespaceList) {
	for i := range l.Items {
		SetObjectDefaults_Namespace(&l.Items[i])
	}
}
