package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestDeleteAnswersWithTheObject: DELETE of the resources whose upstream
// stores set ReturnDeletedObject answers with the deleted object, as
// kube-apiserver v1.37.2's did for each of these manifests (checked on
// loopback); a ConfigMap's answers with a Status, a Namespace's with the
// Namespace.
func TestDeleteAnswersWithTheObject(t *testing.T) {
	srv, err := memoryBackend.start()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{backend: memoryBackend.name, srv: srv}
	ns := fmt.Sprintf("e2e-delete-object-%d", nsCounter.Add(1))
	nsPath := "/api/v1/namespaces/" + ns
	for _, tc := range []struct {
		collection, name, manifest, kind string
	}{
		{"/api/v1/namespaces", ns, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`, ""},
		{"/apis/storage.k8s.io/v1/storageclasses", "e2e-delete-sc", `{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"e2e-delete-sc"},"provisioner":"example.com/x"}`, "StorageClass"},
		{nsPath + "/serviceaccounts", "sa", `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"sa"}}`, "ServiceAccount"},
		{nsPath + "/resourcequotas", "rq", `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"rq"},"spec":{"hard":{"pods":"10"}}}`, "ResourceQuota"},
		{"/api/v1/persistentvolumes", "e2e-delete-pv", `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"e2e-delete-pv"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/tmp/x"}}}`, "PersistentVolume"},
		{nsPath + "/persistentvolumeclaims", "pvc", `{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"pvc"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`, "PersistentVolumeClaim"},
		{"/apis/storage.k8s.io/v1/csidrivers", "e2e-delete.csi.example.com", `{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"e2e-delete.csi.example.com"},"spec":{}}`, "CSIDriver"},
		{"/apis/resource.k8s.io/v1/deviceclasses", "e2e-delete-dc", `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"e2e-delete-dc"},"spec":{}}`, "DeviceClass"},
		{nsPath + "/configmaps", "cm", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}`, "Status"},
		{"/api/v1/namespaces", ns, "", "Namespace"},
	} {
		if tc.manifest != "" {
			if r := e.raw(t, "POST", tc.collection, []byte(tc.manifest)); r.code != 201 {
				t.Fatalf("create %s/%s: %d %.300s", tc.collection, tc.name, r.code, r.body)
			}
		}
		if tc.kind == "" {
			continue
		}
		item := tc.collection + "/" + tc.name
		r := e.raw(t, "DELETE", item, nil)
		var got struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Finalizers []string `json:"finalizers"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(r.body, &got); err != nil || r.code != 200 || got.Kind != tc.kind {
			t.Errorf("DELETE %s: %d %v %.300s, want a %s", item, r.code, err, r.body, tc.kind)
		}
		if len(got.Metadata.Finalizers) > 0 && tc.kind != "Namespace" {
			// Protected (pv-protection, pvc-protection): let it go.
			e.raw(t, "PATCH", item, []byte(`{"metadata":{"finalizers":null}}`), "Content-Type", "application/merge-patch+json")
		}
	}
}
