package garbagecollector

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// maxConflictRetries bounds the read-modify-write loops below; a node
// still conflicting is retried through its queue.
const maxConflictRetries = 5

// resourceFor maps apiVersion and kind to the resource and its scope.
func (gc *Collector) resourceFor(apiVersion, kind string) (schema.GroupVersionResource, bool, error) {
	gvk := schema.FromAPIVersionAndKind(apiVersion, kind)
	m, err := gc.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return schema.GroupVersionResource{}, false, fmt.Errorf("map %s %s to a resource: %w", apiVersion, kind, err)
	}
	return m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// getObject reads ref's object: from its monitor's cache when allowed and
// the cache holds it with ref's UID, else from the API.
func (gc *Collector) getObject(ctx context.Context, ref objectRef, fromCache bool) (*metav1.PartialObjectMetadata, error) {
	gvr, namespaced, err := gc.resourceFor(ref.APIVersion, ref.Kind)
	if err != nil {
		return nil, err
	}
	ns := ""
	if namespaced {
		ns = ref.Namespace
	}
	if fromCache {
		if obj, ok := gc.monitors.lookup(gvr, ns, ref.Name); ok && obj.UID == ref.UID {
			return obj, nil
		}
	}
	return gc.metadata.Resource(gvr).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
}

// deleteObject deletes ref's object with policy, on the condition that it
// is still the object (UID) in the version decided on (resourceVersion).
// If only the version changed and the owner references did not, the
// decision holds and the delete is retried on the UID alone (upstream's
// deleteObject).
func (gc *Collector) deleteObject(ctx context.Context, ref objectRef, resourceVersion string, owners []metav1.OwnerReference, policy metav1.DeletionPropagation) error {
	gvr, namespaced, err := gc.resourceFor(ref.APIVersion, ref.Kind)
	if err != nil {
		return err
	}
	ns := ""
	if namespaced {
		ns = ref.Namespace
	}
	client := gc.metadata.Resource(gvr).Namespace(ns)
	uid := ref.UID
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}, PropagationPolicy: &policy}
	if resourceVersion != "" {
		opts.Preconditions.ResourceVersion = &resourceVersion
	}
	err = client.Delete(ctx, ref.Name, opts)
	if !apierrors.IsConflict(err) || resourceVersion == "" {
		return err
	}
	live, getErr := client.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(getErr) {
		return getErr
	}
	if getErr != nil || live.UID != ref.UID || live.ResourceVersion == resourceVersion || !equality.Semantic.DeepEqual(live.OwnerReferences, owners) {
		return err
	}
	opts.Preconditions.ResourceVersion = nil
	return client.Delete(ctx, ref.Name, opts)
}

// metadataPatch is the JSON merge patch of the metadata fields the
// collector changes. uid and resourceVersion make it conditional: it
// applies to the object read, unchanged since, or fails with a conflict.
type metadataPatch struct {
	Metadata patchMeta `json:"metadata"`
}

type patchMeta struct {
	UID             types.UID `json:"uid"`
	ResourceVersion string    `json:"resourceVersion"`
	// Pointers so that an unchanged field is left out; a pointer to a nil
	// list is sent as null (the field removed).
	OwnerReferences *[]metav1.OwnerReference `json:"ownerReferences,omitempty"`
	Finalizers      *[]string                `json:"finalizers,omitempty"`
}

// updateMetadata reads ref's object, lets change compute the patch (nil:
// nothing to do) and applies it, re-reading from the API on conflicts. A
// missing object is not an error (there is nothing left to change).
func (gc *Collector) updateMetadata(ctx context.Context, ref objectRef, change func(*metav1.PartialObjectMetadata) *patchMeta) error {
	gvr, namespaced, err := gc.resourceFor(ref.APIVersion, ref.Kind)
	if err != nil {
		return err
	}
	ns := ""
	if namespaced {
		ns = ref.Namespace
	}
	client := gc.metadata.Resource(gvr).Namespace(ns)
	for attempt := range maxConflictRetries {
		obj, err := gc.getObject(ctx, ref, attempt == 0)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if obj.UID != ref.UID {
			return nil
		}
		p := change(obj)
		if p == nil {
			return nil
		}
		p.UID, p.ResourceVersion = obj.UID, obj.ResourceVersion
		body, err := json.Marshal(metadataPatch{Metadata: *p})
		if err != nil {
			return err
		}
		_, err = client.Patch(ctx, ref.Name, types.MergePatchType, body, metav1.PatchOptions{})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			return nil
		case apierrors.IsConflict(err):
			continue
		default:
			return fmt.Errorf("patch %s: %w", ref, err)
		}
	}
	return apierrors.NewConflict(gvr.GroupResource(), ref.Name, fmt.Errorf("still conflicting after %d attempts", maxConflictRetries))
}

// removeOwnerReferences removes the references to the UIDs of owners from
// ref's object.
func (gc *Collector) removeOwnerReferences(ctx context.Context, ref objectRef, owners []metav1.OwnerReference) error {
	return gc.updateMetadata(ctx, ref, func(obj *metav1.PartialObjectMetadata) *patchMeta {
		kept := slices.DeleteFunc(slices.Clone(obj.OwnerReferences), func(o metav1.OwnerReference) bool {
			return slices.ContainsFunc(owners, func(r metav1.OwnerReference) bool { return r.UID == o.UID })
		})
		if len(kept) == len(obj.OwnerReferences) {
			return nil
		}
		if len(kept) == 0 {
			kept = nil
		}
		return &patchMeta{OwnerReferences: &kept}
	})
}

// unblockOwnerReferences sets blockOwnerDeletion to false on ref's
// object's blocking owner references.
func (gc *Collector) unblockOwnerReferences(ctx context.Context, ref objectRef) error {
	return gc.updateMetadata(ctx, ref, func(obj *metav1.PartialObjectMetadata) *patchMeta {
		if !slices.ContainsFunc(obj.OwnerReferences, blocks) {
			return nil
		}
		refs := slices.Clone(obj.OwnerReferences)
		for i := range refs {
			if blocks(refs[i]) {
				f := false
				refs[i].BlockOwnerDeletion = &f
			}
		}
		return &patchMeta{OwnerReferences: &refs}
	})
}

// removeFinalizer removes finalizer from ref's object.
func (gc *Collector) removeFinalizer(ctx context.Context, ref objectRef, finalizer string) error {
	return gc.updateMetadata(ctx, ref, func(obj *metav1.PartialObjectMetadata) *patchMeta {
		if !slices.Contains(obj.Finalizers, finalizer) {
			return nil
		}
		kept := slices.DeleteFunc(slices.Clone(obj.Finalizers), func(f string) bool { return f == finalizer })
		if len(kept) == 0 {
			kept = nil
		}
		return &patchMeta{Finalizers: &kept}
	})
}
