package flowcontrol

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestClassificationUIDValues: the header values are []string{UID} of the
// schema and level classified, the same kept slices for every request of
// a schema (no allocation), with a capacity of 1 (an append by a header's
// holder never writes into them), and follow a level's new UID when the
// configuration changes it.
func TestClassificationUIDValues(t *testing.T) {
	c := newDefault(t, 600)
	for _, req := range []Request{
		{User: "alice", Groups: []string{"system:authenticated"}, IsResourceRequest: true, Verb: "get", Resource: "pods", Namespace: "app"},
		{User: "admin", Groups: []string{"system:masters"}, IsResourceRequest: true, Verb: "list", Resource: "pods"},
		{User: "nobody", IsResourceRequest: true, Verb: "list", Resource: "pods"}, // catch-all
	} {
		cls := c.Classify(&req)
		fs, pl := cls.FlowSchemaUIDValues(), cls.PriorityLevelUIDValues()
		if !slices.Equal(fs, []string{cls.FlowSchemaUID}) || !slices.Equal(pl, []string{cls.PriorityLevelUID}) {
			t.Errorf("%s: values %q %q, want [%q] [%q]", req.User, fs, pl, cls.FlowSchemaUID, cls.PriorityLevelUID)
		}
		if cap(fs) != 1 || cap(pl) != 1 {
			t.Errorf("%s: capacities %d %d, want 1", req.User, cap(fs), cap(pl))
		}
		again := c.Classify(&req)
		if &again.FlowSchemaUIDValues()[0] != &fs[0] || &again.PriorityLevelUIDValues()[0] != &pl[0] {
			t.Errorf("%s: a second request got new values", req.User)
		}
		if n := testing.AllocsPerRun(100, func() {
			cls := c.Classify(&req)
			_, _ = cls.FlowSchemaUIDValues(), cls.PriorityLevelUIDValues()
		}); n != 0 {
			t.Errorf("%s: %v allocations, want 0", req.User, n)
		}
	}
	// A new UID for a level (and a schema) is in the next classification.
	fss, pls := defaultConfig()
	for _, pl := range pls {
		pl.UID = types.UID("new-" + string(pl.UID))
	}
	for _, fs := range fss {
		fs.UID = types.UID("new-" + string(fs.UID))
	}
	c.Apply(fss, pls)
	cls := c.Classify(&Request{User: "alice", Groups: []string{"system:authenticated"}, IsResourceRequest: true, Verb: "get", Resource: "pods", Namespace: "app"})
	if got := cls.PriorityLevelUIDValues(); !slices.Equal(got, []string{"new-pl-global-default"}) {
		t.Errorf("after the change: level values %q", got)
	}
	if got := cls.FlowSchemaUIDValues(); !slices.Equal(got, []string{"new-fs-global-default"}) {
		t.Errorf("after the change: schema values %q", got)
	}
	// A Classification not made by Classify answers too.
	if got := (&Classification{FlowSchemaUID: "u"}).FlowSchemaUIDValues(); !slices.Equal(got, []string{"u"}) {
		t.Errorf("zero classification: %q", got)
	}
}
