package storagetest

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// Codec returns a JSON codec for the core/v1 types the suite stores (real
// kube types through apimachinery's serializer, as a server would use).
func Codec() runtime.Codec {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		panic(fmt.Sprintf("storagetest: add core/v1 to scheme: %v", err)) // static registration cannot fail
	}
	return serializer.NewCodecFactory(scheme).LegacyCodec(corev1.SchemeGroupVersion)
}

// PodResource is the main resource of the suite: *corev1.Pod under "/pods",
// with labels and the fields metadata.name, metadata.namespace and
// spec.nodeName for predicates.
func PodResource(codec runtime.Codec) Resource {
	return Resource{
		Prefix:      "/pods",
		Codec:       codec,
		NewFunc:     func() runtime.Object { return &corev1.Pod{} },
		NewListFunc: func() runtime.Object { return &corev1.PodList{} },
		GetAttrs:    PodAttrs,
	}
}

// ConfigMapResource is the second resource: *corev1.ConfigMap under
// "/configmaps", used for large objects and the shared revision.
func ConfigMapResource(codec runtime.Codec) Resource {
	return Resource{
		Prefix:      "/configmaps",
		Codec:       codec,
		NewFunc:     func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} },
		GetAttrs:    storage.DefaultAttrs,
	}
}

// PodAttrs returns a pod's labels and its name, namespace and spec.nodeName
// fields.
func PodAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil, fmt.Errorf("not a pod: %T", obj)
	}
	return labels.Set(pod.Labels), fields.Set{
		"metadata.name":      pod.Name,
		"metadata.namespace": pod.Namespace,
		"spec.nodeName":      pod.Spec.NodeName,
	}, nil
}
