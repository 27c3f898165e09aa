package customresource

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/apiextensions/conversion"
)

// Convertor converts custom resources between versions with the CRD's
// converter (nil: strategy None, only apiVersion changes), other objects
// with the shared scheme, and accepts the field selector labels of each
// kind: metadata.name, metadata.namespace when namespaced, and the
// selectable fields (anything else is upstream's "field label not
// supported"). The field manager converts through it to compare managed
// fields recorded in other versions.
type Convertor struct {
	// Kinds are the field selector labels of each kind.
	Kinds map[schema.GroupVersionKind]KindLabels
	// Converter is the CRD's converter; nil: strategy None.
	Converter conversion.Converter
}

// KindLabels are the field selector labels of one kind.
type KindLabels struct {
	// Namespaced: metadata.namespace is a label.
	Namespaced bool
	// Fields are the labels of the selectable fields (LabelNames).
	Fields []string
}

var _ runtime.ObjectConvertor = Convertor{}

func (Convertor) Convert(in, out, context any) error {
	u, ok := in.(*unstructured.Unstructured)
	o, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return scheme.Scheme.Convert(in, out, context)
	}
	o.Object = runtime.DeepCopyJSON(u.Object)
	return nil
}

func (c Convertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return scheme.Scheme.ConvertToVersion(in, target)
	}
	k, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, runtime.NewNotRegisteredGVKErrForTarget("apiextensions", u.GroupVersionKind(), target)
	}
	if c.Converter != nil && k.GroupVersion() != u.GroupVersionKind().GroupVersion() {
		converted, err := c.Converter.ConvertObject(context.Background(), u, k.GroupVersion())
		if err != nil {
			return nil, err
		}
		if converted == u {
			converted = u.DeepCopy()
		}
		return converted, nil
	}
	out := u.DeepCopy()
	out.SetAPIVersion(k.GroupVersion().String())
	return out, nil
}

func (c Convertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	l, ok := c.Kinds[gvk]
	switch {
	case label == "metadata.name":
		return label, value, nil
	case label == "metadata.namespace" && (!ok || l.Namespaced):
		return label, value, nil
	case ok && slices.Contains(l.Fields, label):
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// ReadConvertor is the field manager's Convertor for updates
// (fieldmanager.Config.ReadConvertor): a custom resource already in the
// target version is returned as it is, not copied (Convertor copies it),
// because the update's field manager only reads what it converts. Any
// other conversion is Convertor's.
type ReadConvertor struct{ Convertor }

func (c ReadConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	if u, ok := in.(*unstructured.Unstructured); ok {
		gvk := u.GroupVersionKind()
		if k, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{gvk}); ok && k == gvk {
			return u, nil
		}
	}
	return c.Convertor.ConvertToVersion(in, target)
}
