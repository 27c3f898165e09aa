package fieldmanager

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kapi-dev/kapi/pkg/api/unstructuredmeta"
)

// crUpdater is the update (not apply) of a custom resource's field
// manager, done by kapi for the common case and handed to upstream's
// manager chain for anything else.
//
// Upstream's chain for an update (managedfields' FieldManager.Update and
// the managers NewDefaultCRDFieldManager stacks: version check, last
// applied, skip non-applied, cap managers, build manager info, managed
// fields updater, strip meta, structured merge) decodes every
// managedFields entry (an encoding of fieldsV1 to JSON, then
// fieldpath.Set.FromJSON), builds each manager's identifier (a JSON
// encoding), and encodes the result back (Set.ToJSON, a JSON decoding
// of each identifier). Every update of a custom resource paid for all of
// it, though the entries hardly change from one update to the next.
// crUpdater runs the same steps in the same order, on the same
// structured-merge-diff updater, type converter and convertor, but
//
//   - takes each entry's field set from setCache, keyed by the content
//     of its fieldsV1 (sets are never changed once built: every set
//     operation returns a new one), and the identifiers from idCache;
//   - writes the fieldsV1 of a set equal to one it decoded from the
//     JSON kept with it.
//
// It answers only when every step is on its common path: the entries it
// decodes are of the shape the field manager writes (the six string
// fields, fieldsV1 an object of objects, a time that parses) and all of
// the served version (no conversion between versions), and no step
// fails. Anything else (resets, odd entries, entries of other versions,
// errors, which upstream's chain reports by keeping the live object's
// entries) returns ok false with newObj unchanged, and the caller runs
// upstream's chain. TestUpdatesAsUpstream compares the results with
// upstream's field manager.
type crUpdater struct {
	tc          managedfields.TypeConverter
	convertor   runtime.ObjectConvertor // reads: may return its input
	gv          schema.GroupVersion
	apiVersion  fieldpath.APIVersion
	subresource string
	updater     merge.Updater
	// self is the identifier of the manager of the update in progress,
	// as upstream's managedFieldsUpdater names it.
	self string
}

// newCRUpdater builds the update path of the field manager of kind's
// (sub)resource: tc and convertor are the ones upstream's update manager
// is built with (unwrapped), reset its reset-field filters.
func newCRUpdater(tc managedfields.TypeConverter, convertor runtime.ObjectConvertor, kind schema.GroupVersionKind, subresource string, reset map[fieldpath.APIVersion]fieldpath.Filter) *crUpdater {
	gv := kind.GroupVersion()
	return &crUpdater{
		tc:          tc,
		convertor:   convertor,
		gv:          gv,
		apiVersion:  fieldpath.APIVersion(gv.String()),
		subresource: subresource,
		updater:     merge.Updater{Converter: sameVersion{}, IgnoreFilter: reset},
		self:        "current-operation",
	}
}

// managed is a decoded managedFields list: upstream's Managed.
type managed struct {
	fields fieldpath.ManagedFields
	times  map[string]*metav1.Time
	// decoded are the sets the fields were decoded from, by manager,
	// for writing the ones that did not change.
	decoded map[string]*cachedSet
}

// update returns newObj with its managedFields updated for an update by
// manager, as upstream's FieldManager.UpdateNoErrors would, or ok false
// (newObj unchanged) when upstream's chain must do it.
func (c *crUpdater) update(liveObj, newObj *unstructured.Unstructured, manager string) (out *unstructured.Unstructured, ok bool) {
	newMeta, isMap := newObj.Object["metadata"].(map[string]any)
	if !isMap {
		return nil, false
	}
	// decodeLiveOrNew: a subresource takes the live object's entries;
	// the main resource the request's, unless they are absent, empty or
	// do not decode (a reset, [] or [{}], does not decode here: upstream
	// does that).
	var m *managed
	if c.subresource == "" {
		if raw, found := newMeta["managedFields"]; found && raw != nil {
			if m, ok = decodeManaged(raw, c.apiVersion); !ok || len(m.fields) == 0 {
				return nil, false
			}
		}
	}
	if m == nil {
		liveMeta, isMap := liveObj.Object["metadata"].(map[string]any)
		if !isMap {
			return nil, false
		}
		raw, found := liveMeta["managedFields"]
		if !found || raw == nil {
			return nil, false
		}
		if m, ok = decodeManaged(raw, c.apiVersion); !ok || len(m.fields) == 0 {
			return nil, false
		}
	}

	// As UpdateNoErrors: the live object's managedFields are left out of
	// its typed value when that changes nothing.
	skipLive := skippableLiveManagedFields(liveObj, newObj)

	// RemoveObjectManagedFields, undone on the way out unless the update
	// is done here.
	saved, had := newMeta["managedFields"]
	unstructuredmeta.SetManagedFields(newObj, nil)
	defer func() {
		if !ok && had {
			newMeta["managedFields"] = saved
		}
	}()

	// skipNonAppliedManager goes on: the entries are not empty.
	// buildManagerInfoManager:
	if manager == "" {
		manager = "unknown"
	}
	id, ok := managerID(manager, metav1.ManagedFieldsOperationUpdate, string(c.apiVersion), c.subresource)
	if !ok {
		return nil, false
	}
	// managedFieldsUpdater, around stripMetaManager, around
	// structuredMergeManager:
	fields, err := c.structuredMerge(liveObj, newObj, skipLive, m.fields)
	if err != nil {
		return nil, false
	}
	stripFields(fields, c.self)
	times := m.times // decodeManaged made it for this update alone: no copy
	if vs, found := fields[c.self]; found {
		delete(fields, c.self)
		if previous, found := fields[id]; found {
			fields[id] = fieldpath.NewVersionedSet(vs.Set().Union(previous.Set()), vs.APIVersion(), vs.Applied())
		} else {
			fields[id] = vs
		}
		times[id] = &metav1.Time{Time: time.Now().UTC()}
	}
	// capManagersManager:
	if !capUpdateManagers(fields, times, 10) {
		return nil, false
	}
	// EncodeObjectManagedFields:
	entries, ok := encodeManaged(fields, times, m.decoded)
	if !ok {
		return nil, false
	}
	unstructuredmeta.SetManagedFields(newObj, entries)
	return newObj, true
}

// structuredMerge is structuredMergeManager.Update for c.self: the
// request's fields taken from the comparison of the live and the new
// object in c's version, the live one without its managedFields when
// skipLive.
func (c *crUpdater) structuredMerge(liveObj, newObj *unstructured.Unstructured, skipLive bool, fields fieldpath.ManagedFields) (fieldpath.ManagedFields, error) {
	newV, err := c.convertor.ConvertToVersion(newObj, c.gv)
	if err != nil {
		return nil, err
	}
	liveV, err := c.convertor.ConvertToVersion(liveObj, c.gv)
	if err != nil {
		return nil, err
	}
	if u, isU := liveV.(*unstructured.Unstructured); isU && skipLive {
		liveV = withoutManagedFields(u)
	}
	newT, err := c.tc.ObjectToTyped(newV, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	liveT, err := c.tc.ObjectToTyped(liveV, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	_, out, err := c.updater.Update(liveT, newT, c.apiVersion, fields, c.self)
	return out, err
}

// errOtherVersion: sameVersion was asked for a conversion.
var errOtherVersion = errors.New("field manager: conversion between versions")

// sameVersion is the updater's converter when every entry is of the
// served version: upstream's converts only what is not in the version
// asked for, which here is nothing; anything else fails the update,
// which upstream's chain then does.
type sameVersion struct{}

func (sameVersion) Convert(object *typed.TypedValue, version fieldpath.APIVersion) (*typed.TypedValue, error) {
	v := object.AsValue()
	if v.IsMap() {
		if av, found := v.AsMap().Get("apiVersion"); found && av.IsString() && av.AsString() == string(version) {
			return object, nil
		}
	}
	return nil, errOtherVersion
}

func (sameVersion) IsMissingVersionError(error) bool { return false }

// stripSet is what stripMetaManager takes out of an update's fields.
var stripSet = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// stripFields is stripMetaManager's.
func stripFields(fields fieldpath.ManagedFields, manager string) {
	vs, found := fields[manager]
	if !found || vs == nil {
		return
	}
	set := vs.Set().Difference(stripSet)
	if set.Empty() {
		delete(fields, manager)
		return
	}
	fields[manager] = fieldpath.NewVersionedSet(set, vs.APIVersion(), vs.Applied())
}

// capUpdateManagers is capManagersManager's: the oldest update entries
// beyond max merged into one "ancient-changes" entry per version.
func capUpdateManagers(fields fieldpath.ManagedFields, times map[string]*metav1.Time, max int) bool {
	var updaters []string
	for manager, vs := range fields {
		if !vs.Applied() {
			updaters = append(updaters, manager)
		}
	}
	if len(updaters) <= max {
		return true
	}
	seconds := func(manager string) int64 {
		if t := times[manager]; t != nil {
			return t.Unix()
		}
		return 0
	}
	slices.SortFunc(updaters, func(a, b string) int {
		if c := cmp.Compare(seconds(a), seconds(b)); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	first := map[string]string{} // version → its first (oldest) manager
	for i, length := 0, len(updaters); i < len(updaters) && length > max; i++ {
		manager := updaters[i]
		vs := fields[manager]
		t := times[manager]
		version := string(vs.APIVersion())
		bucket, ok := managerID("ancient-changes", metav1.ManagedFieldsOperationUpdate, version, "")
		if !ok {
			return false
		}
		f, seen := first[version]
		if !seen {
			first[version] = manager
			continue
		}
		if _, found := fields[bucket]; !found {
			s := fields[f]
			delete(fields, f)
			fields[bucket] = s
		}
		fields[bucket] = fieldpath.NewVersionedSet(vs.Set().Union(fields[bucket].Set()), vs.APIVersion(), vs.Applied())
		delete(fields, manager)
		length--
		times[bucket] = t
	}
	return true
}

// decodeManaged is DecodeManagedFields of raw, a managedFields value of
// an unstructured object, when every entry is of the shape the field
// manager writes and of version apiVersion.
func decodeManaged(raw any, apiVersion fieldpath.APIVersion) (*managed, bool) {
	items, isSlice := raw.([]any)
	if !isSlice {
		return nil, false
	}
	m := &managed{
		fields:  make(fieldpath.ManagedFields, len(items)),
		times:   make(map[string]*metav1.Time, len(items)),
		decoded: make(map[string]*cachedSet, len(items)),
	}
	for _, item := range items {
		entry, isMap := item.(map[string]any)
		if !isMap {
			return nil, false
		}
		var (
			e      metav1.ManagedFieldsEntry
			fields map[string]any
		)
		for k, v := range entry {
			if k == "fieldsV1" {
				if fields, isMap = v.(map[string]any); !isMap {
					return nil, false
				}
				continue
			}
			s, isString := v.(string)
			if !isString || !unstructuredmeta.SetEntryField(&e, k, s) {
				return nil, false
			}
		}
		if fields == nil || e.FieldsType != "FieldsV1" || e.APIVersion != string(apiVersion) ||
			(e.Operation != metav1.ManagedFieldsOperationApply && e.Operation != metav1.ManagedFieldsOperationUpdate) {
			return nil, false
		}
		idVersion := e.APIVersion
		if e.Operation == metav1.ManagedFieldsOperationApply {
			idVersion = ""
		}
		id, ok := managerID(e.Manager, e.Operation, idVersion, e.Subresource)
		if !ok {
			return nil, false
		}
		set, ok := sets.get(fields)
		if !ok {
			return nil, false
		}
		m.fields[id] = fieldpath.NewVersionedSet(set.set, apiVersion, e.Operation == metav1.ManagedFieldsOperationApply)
		m.times[id] = e.Time
		m.decoded[id] = set
	}
	return m, true
}

// encodeManaged is encodeManagedFields: the entries of fields, sorted as
// upstream sorts them.
func encodeManaged(fields fieldpath.ManagedFields, times map[string]*metav1.Time, decoded map[string]*cachedSet) ([]metav1.ManagedFieldsEntry, bool) {
	if len(fields) == 0 {
		return nil, true
	}
	entries := make([]metav1.ManagedFieldsEntry, 0, len(fields))
	for id, vs := range fields {
		e, ok := managerEntry(id)
		if !ok {
			return nil, false
		}
		e.APIVersion = string(vs.APIVersion())
		if vs.Applied() {
			e.Operation = metav1.ManagedFieldsOperationApply
		}
		e.FieldsType = "FieldsV1"
		var raw []byte
		if d := decoded[id]; d != nil && (d.set == vs.Set() || d.set.Equals(vs.Set())) {
			raw = d.json()
		}
		if raw == nil {
			var err error
			if raw, err = vs.Set().ToJSON(); err != nil {
				return nil, false
			}
		}
		e.FieldsV1 = &metav1.FieldsV1{Raw: raw}
		if t, found := times[id]; found {
			e.Time = t
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, compareEntries)
	return entries, true
}

// compareEntries is sortEncodedManagedFields' order; no two entries of
// one list compare equal (their managers' identifiers differ).
func compareEntries(p, q metav1.ManagedFieldsEntry) int {
	if c := cmp.Compare(p.Operation, q.Operation); c != 0 {
		return c
	}
	var ps, qs int64
	if p.Time != nil {
		ps = p.Time.Unix()
	}
	if q.Time != nil {
		qs = q.Time.Unix()
	}
	if c := cmp.Compare(ps, qs); c != 0 {
		return c
	}
	if c := cmp.Compare(p.Manager, q.Manager); c != 0 {
		return c
	}
	if c := cmp.Compare(p.APIVersion, q.APIVersion); c != 0 {
		return c
	}
	return cmp.Compare(p.Subresource, q.Subresource)
}

// managerID is BuildManagerIdentifier of an entry with these fields (the
// caller leaves apiVersion empty for Apply): its JSON encoding.
func managerID(manager string, op metav1.ManagedFieldsOperationType, apiVersion, subresource string) (string, bool) {
	key := idKey{manager, op, apiVersion, subresource}
	if id, found := ids.byKey(key); found {
		return id, true
	}
	b, err := json.Marshal(&metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: apiVersion, Subresource: subresource})
	if err != nil {
		return "", false
	}
	id := string(b)
	ids.add(key, id)
	return id, true
}

// managerEntry is what encodeManagerVersionedSet starts an entry from:
// the JSON decoding of a manager's identifier.
func managerEntry(id string) (metav1.ManagedFieldsEntry, bool) {
	if e, found := ids.byID(id); found {
		return e, true
	}
	var e metav1.ManagedFieldsEntry
	if err := json.Unmarshal([]byte(id), &e); err != nil {
		return metav1.ManagedFieldsEntry{}, false
	}
	ids.addEntry(id, e)
	return e, true
}
