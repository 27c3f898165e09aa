package controlplane_test

import (
	"encoding/json"
	"testing"
)

// A Secret's stringData is merged into data when the request is decoded,
// before the field manager looks, as upstream's conversion does: a create
// or merge patch with stringData records f:data and f:type, while server-
// side apply (which works on the request as sent) records f:stringData.
// Every expected value is kube-apiserver v1.37.2's answer to the same
// requests.
func TestSecretStringDataManagedFields(t *testing.T) {
	rc := startRESTClient(t)
	ctx := t.Context()
	path := "/api/v1/namespaces/default/secrets"
	fields := func(raw []byte) string {
		t.Helper()
		var s struct {
			Metadata struct {
				ManagedFields []struct {
					Manager  string
					FieldsV1 json.RawMessage
				}
			}
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, m := range s.Metadata.ManagedFields {
			out += m.Manager + "=" + string(m.FieldsV1) + ";"
		}
		return out
	}
	raw, err := rc.Post().AbsPath(path).Param("fieldManager", "x").SetHeader("Content-Type", "application/json").
		Body([]byte(`{"metadata":{"name":"s2"},"stringData":{"a":"b"},"data":{"c":"ZA=="}}`)).Do(ctx).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fields(raw), `x={"f:data":{".":{},"f:a":{},"f:c":{}},"f:type":{}};`; got != want {
		t.Errorf("create: managed fields %s, want %s", got, want)
	}
	raw, err = rc.Patch("application/merge-patch+json").AbsPath(path, "s2").Param("fieldManager", "x").
		Body([]byte(`{"stringData":{"e":"f"}}`)).Do(ctx).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fields(raw), `x={"f:data":{".":{},"f:a":{},"f:c":{},"f:e":{}},"f:type":{}};`; got != want {
		t.Errorf("merge patch: managed fields %s, want %s", got, want)
	}
	raw, err = rc.Patch("application/apply-patch+yaml").AbsPath(path, "s2").Param("fieldManager", "ap").
		Body([]byte(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s2"},"stringData":{"g":"h"}}`)).Do(ctx).Raw()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fields(raw), `ap={"f:stringData":{"f:g":{}}};x={"f:data":{".":{},"f:a":{},"f:c":{},"f:e":{}},"f:type":{}};`; got != want {
		t.Errorf("apply: managed fields %s, want %s", got, want)
	}
	var s struct{ Data map[string]string }
	if err := json.Unmarshal(raw, &s); err != nil || len(s.Data) != 4 || s.Data["g"] != "aA==" {
		t.Errorf("data after apply: %v %v", s.Data, err)
	}
}
