package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// level returns the request's level and whether managedFields are omitted
// (LevelNone when the request is not audited).
func (c *Context) level() (Level, bool) {
	if c == nil {
		return LevelNone, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event == nil {
		return LevelNone, false
	}
	return c.policy.Level, c.policy.OmitManagedFields
}

// ResponseObjectWanted reports whether the request's audit event records
// the response object (level RequestResponse): LogResponseObject then
// needs the whole object.
func ResponseObjectWanted(ctx context.Context) bool {
	level, _ := FromContext(ctx).level()
	return !level.Less(LevelRequestResponse)
}

// LogRequestObject records the decoded request object, as upstream's
// audit.LogRequestObject: at Metadata level and above the object reference
// is completed from it (namespace, name, uid, resourceVersion, group,
// version, resource, subresource, where not known yet); at Request level
// and above the object itself is recorded, encoded as JSON for objGV by
// ns. Cheap when the request is not audited.
func LogRequestObject(ctx context.Context, obj runtime.Object, objGV schema.GroupVersion, gvr schema.GroupVersionResource, subresource string, ns runtime.NegotiatedSerializer) {
	c := FromContext(ctx)
	level, omitManaged := c.level()
	if level == LevelNone || obj == nil {
		return
	}
	var raw *runtime.Unknown
	if !level.Less(LevelRequest) {
		var err error
		if raw, err = encodeObject(obj, objGV, ns, omitManaged); err != nil {
			slog.Debug("audit: encode request object", "err", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event == nil {
		return
	}
	// Copy on write: snapshots already sent share the old reference.
	ref := &ObjectReference{}
	if c.event.ObjectRef != nil {
		*ref = *c.event.ObjectRef
	}
	c.event.ObjectRef = ref
	if m, err := meta.Accessor(obj); err == nil {
		if ref.Namespace == "" {
			ref.Namespace = m.GetNamespace()
		}
		if ref.Name == "" {
			ref.Name = m.GetName()
		}
		if ref.UID == "" {
			ref.UID = types.UID(m.GetUID())
		}
		if ref.ResourceVersion == "" {
			ref.ResourceVersion = m.GetResourceVersion()
		}
	}
	if ref.APIVersion == "" {
		ref.APIGroup, ref.APIVersion = gvr.Group, gvr.Version
	}
	if ref.Resource == "" {
		ref.Resource = gvr.Resource
	}
	if ref.Subresource == "" {
		ref.Subresource = subresource
	}
	if raw != nil {
		c.event.RequestObject = raw
	}
}

// LogRequestPatch records a patch body as the request object at Request
// level and above, as upstream. A YAML body (apply patches may be YAML) is
// recorded as its JSON form so that the event stays valid JSON.
func LogRequestPatch(ctx context.Context, patch []byte) {
	c := FromContext(ctx)
	if level, _ := c.level(); level.Less(LevelRequest) {
		return
	}
	raw := bytes.TrimSpace(patch)
	if len(raw) > 0 && raw[0] != '{' && raw[0] != '[' {
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return
		}
		raw = j
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event != nil {
		c.event.RequestObject = &runtime.Unknown{Raw: bytes.Clone(raw), ContentType: runtime.ContentTypeJSON}
	}
}

// LogResponseObject records the object a response carries, as upstream's
// audit.LogResponseObject: the bounded fields of a Status at Metadata level
// and above; the object itself, encoded as JSON for gv by ns, at
// RequestResponse level.
func LogResponseObject(ctx context.Context, obj runtime.Object, gv schema.GroupVersion, ns runtime.NegotiatedSerializer) {
	c := FromContext(ctx)
	level, omitManaged := c.level()
	if level == LevelNone || obj == nil {
		return
	}
	if s, ok := obj.(*metav1.Status); ok {
		LogResponseStatus(ctx, s)
	}
	if level.Less(LevelRequestResponse) {
		return
	}
	raw, err := encodeObject(obj, gv, ns, omitManaged)
	if err != nil {
		slog.Debug("audit: encode response object", "err", err)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event != nil {
		c.event.ResponseObject = raw
	}
}

// LogResponseJSON records raw, the JSON encoding of the object a response
// carries, as the response object at RequestResponse level: for handlers
// that hold their answer already encoded (discovery), where upstream's
// LogResponseObject would encode the same object to the same JSON.
func LogResponseJSON(ctx context.Context, raw []byte) {
	if !ResponseObjectWanted(ctx) {
		return
	}
	c := FromContext(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.event != nil {
		c.event.ResponseObject = &runtime.Unknown{Raw: bytes.TrimRight(raw, "\n"), ContentType: runtime.ContentTypeJSON}
	}
}

// encodeObject encodes obj as JSON for gv, without managedFields if asked
// (the object, a list's items, a Table's rows), as upstream's encodeObject.
// A nil ns encodes obj as it is with encoding/json.
func encodeObject(obj runtime.Object, gv schema.GroupVersion, ns runtime.NegotiatedSerializer, omitManaged bool) (*runtime.Unknown, error) {
	if omitManaged {
		obj = withoutManagedFields(obj)
	}
	if ns == nil {
		raw, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encoding failed: %w", err)
		}
		return &runtime.Unknown{Raw: raw, ContentType: runtime.ContentTypeJSON}, nil
	}
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		return nil, fmt.Errorf("unable to locate encoder -- %q is not a supported media type", runtime.ContentTypeJSON)
	}
	var buf bytes.Buffer
	if err := ns.EncoderForVersion(info.Serializer, gv).Encode(obj, &buf); err != nil {
		return nil, fmt.Errorf("encoding failed: %w", err)
	}
	return &runtime.Unknown{Raw: bytes.TrimRight(buf.Bytes(), "\n"), ContentType: runtime.ContentTypeJSON}, nil
}

func withoutManagedFields(obj runtime.Object) runtime.Object {
	_, accessorErr := meta.Accessor(obj)
	isList := meta.IsListType(obj)
	_, isTable := obj.(*metav1.Table)
	if accessorErr != nil && !isList && !isTable {
		return obj
	}
	cp := obj.DeepCopyObject()
	clear := func(o runtime.Object) error {
		if o == nil {
			return nil
		}
		if m, err := meta.Accessor(o); err == nil {
			m.SetManagedFields(nil)
		}
		return nil
	}
	if accessorErr == nil {
		_ = clear(cp)
	}
	if isList {
		_ = meta.EachListItem(cp, clear)
	}
	if t, ok := cp.(*metav1.Table); ok {
		for i := range t.Rows {
			_ = clear(t.Rows[i].Object.Object)
		}
	}
	return cp
}
