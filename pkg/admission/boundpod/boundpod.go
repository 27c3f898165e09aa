// Package boundpod holds what upstream's node-aware pod admission plugins
// (PodResizeValidator, NodeDeclaredFeatureValidator) share: finding an
// update that changed the spec of a pod bound to a node, and reading that
// node with their 403s.
package boundpod

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/admission"
)

// NodeGetter reads a Node (a *corev1.Node; namespace is "").
type NodeGetter interface {
	Get(ctx context.Context, namespace, name string) (runtime.Object, error)
}

// SpecUpdate returns the new and old pod of a, an update of pods: ok is
// false when the pod is bound to no node or its spec did not change (the
// generation moves only when it does), and err is upstream's 400 when the
// objects are not pods.
func SpecUpdate(a admission.Attributes) (pod, old *corev1.Pod, ok bool, err error) {
	pod, isPod := a.Object.(*corev1.Pod)
	if !isPod {
		return nil, nil, false, apierrors.NewBadRequest(fmt.Sprintf("expected a pod but got a %T", a.Object))
	}
	if pod.Spec.NodeName == "" {
		return nil, nil, false, nil
	}
	old, isPod = a.OldObject.(*corev1.Pod)
	if !isPod {
		return nil, nil, false, apierrors.NewBadRequest(fmt.Sprintf("expected an old pod but got a %T", a.OldObject))
	}
	if old.Generation == pod.Generation {
		return nil, nil, false, nil
	}
	return pod, old, true, nil
}

// Node reads the node named name, or returns upstream's 403 for a's
// request: `node "<name>" not found`, or `failed to get node "<name>": ...`.
func Node(ctx context.Context, nodes NodeGetter, a admission.Attributes, name string) (*corev1.Node, error) {
	obj, err := nodes.Get(ctx, "", name)
	if apierrors.IsNotFound(err) {
		return nil, admission.NewForbidden(a, fmt.Errorf("node %q not found", name))
	}
	if err != nil {
		return nil, admission.NewForbidden(a, fmt.Errorf("failed to get node %q: %w", name, err))
	}
	node, ok := obj.(*corev1.Node)
	if !ok {
		return nil, admission.NewForbidden(a, fmt.Errorf("failed to get node %q: got a %T", name, obj))
	}
	return node, nil
}
