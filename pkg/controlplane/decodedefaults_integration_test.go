package controlplane_test

import (
	"encoding/json"
	"testing"
)

// Defaults upstream applies when it decodes a request are seen by the field
// manager, so a create records the defaulted fields as the creator's. Each
// expected managedFields entry is kube-apiserver v1.37.2's answer to the
// same create.
func TestDecodeDefaultsInManagedFields(t *testing.T) {
	rc := startRESTClient(t)
	ctx := t.Context()
	for _, tc := range []struct{ path, body, want string }{
		{"/api/v1/namespaces", `{"metadata":{"name":"dd1"}}`,
			`{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}`},
		{"/api/v1/namespaces/default/services", `{"metadata":{"name":"svc9"},"spec":{"ports":[{"port":80}],"clusterIP":"None"}}`,
			`{"f:spec":{"f:clusterIP":{},"f:internalTrafficPolicy":{},"f:ports":{".":{},"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{},"f:protocol":{},"f:targetPort":{}}},"f:sessionAffinity":{},"f:type":{}}}`},
		{"/api/v1/namespaces/default/services", `{"metadata":{"name":"svc10"},"spec":{"type":"ExternalName","externalName":"localhost"}}`,
			`{"f:spec":{"f:externalName":{},"f:sessionAffinity":{},"f:type":{}}}`},
		{"/api/v1/namespaces/default/services", `{"metadata":{"name":"svc11"},"spec":{"type":"ClusterIP","clusterIP":"None","sessionAffinity":"ClientIP","ports":[{"port":80,"targetPort":"http","name":"h"}]}}`,
			`{"f:spec":{"f:clusterIP":{},"f:internalTrafficPolicy":{},"f:ports":{".":{},"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{},"f:targetPort":{}}},"f:sessionAffinity":{},"f:sessionAffinityConfig":{".":{},"f:clientIP":{".":{},"f:timeoutSeconds":{}}},"f:type":{}}}`},
	} {
		raw, err := rc.Post().AbsPath(tc.path).Param("fieldManager", "x").SetHeader("Content-Type", "application/json").Body([]byte(tc.body)).Do(ctx).Raw()
		if err != nil {
			t.Errorf("create in %s: %v", tc.path, err)
			continue
		}
		var o struct {
			Metadata struct {
				ManagedFields []struct{ FieldsV1 json.RawMessage }
			}
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		if len(o.Metadata.ManagedFields) != 1 || string(o.Metadata.ManagedFields[0].FieldsV1) != tc.want {
			t.Errorf("create in %s %s: managed fields %s, want %s", tc.path, tc.body, raw, tc.want)
		}
	}
}
