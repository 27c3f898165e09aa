package controlplane_test

import (
	"encoding/json"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// DELETE answers with the deleted object for the resources whose upstream
// store sets ReturnDeletedObject (k8s.io/kubernetes v1.37.2
// pkg/registry/*/storage/storage.go; kube-apiserver v1.37.2 answered so
// for serviceaccounts, storageclasses and deviceclasses), and with a
// Status for the others.
func TestDeleteAnswersWithTheObjectAsUpstream(t *testing.T) {
	rc := startRESTClient(t)
	ctx := t.Context()
	for _, tc := range []struct{ path, body, want string }{
		{"/api/v1/namespaces/default/serviceaccounts", `{"metadata":{"name":"d1"}}`, "ServiceAccount"},
		{"/api/v1/namespaces/default/resourcequotas", `{"metadata":{"name":"d1"},"spec":{"hard":{"pods":"1"}}}`, "ResourceQuota"},
		{"/api/v1/persistentvolumes", `{"metadata":{"name":"d1"},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadWriteOnce"],"hostPath":{"path":"/tmp/x"}}}`, "PersistentVolume"},
		{"/api/v1/namespaces/default/persistentvolumeclaims", `{"metadata":{"name":"d1"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`, "PersistentVolumeClaim"},
		{"/apis/storage.k8s.io/v1/storageclasses", `{"metadata":{"name":"d1"},"provisioner":"x.io/p"}`, "StorageClass"},
		{"/apis/storage.k8s.io/v1/csidrivers", `{"metadata":{"name":"d1.example.com"},"spec":{}}`, "CSIDriver"},
		{"/apis/storage.k8s.io/v1/csinodes", `{"metadata":{"name":"d1"},"spec":{"drivers":[]}}`, "CSINode"},
		{"/apis/storage.k8s.io/v1/volumeattachments", `{"metadata":{"name":"d1"},"spec":{"attacher":"a.example.com","nodeName":"n1","source":{"persistentVolumeName":"pv1"}}}`, "VolumeAttachment"},
		{"/apis/storage.k8s.io/v1/volumeattributesclasses", `{"metadata":{"name":"d1"},"driverName":"x.io/d","parameters":{"a":"b"}}`, "VolumeAttributesClass"},
		{"/apis/resource.k8s.io/v1/deviceclasses", `{"metadata":{"name":"d1"},"spec":{}}`, "DeviceClass"},
		{"/apis/resource.k8s.io/v1/namespaces/default/resourceclaims", `{"metadata":{"name":"d1"},"spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"c"}}]}}}`, "ResourceClaim"},
		{"/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates", `{"metadata":{"name":"d1"},"spec":{"spec":{"devices":{"requests":[{"name":"r","exactly":{"deviceClassName":"c"}}]}}}}`, "ResourceClaimTemplate"},
		{"/apis/resource.k8s.io/v1/resourceslices", `{"metadata":{"name":"d1"},"spec":{"driver":"x.io","pool":{"name":"p","resourceSliceCount":1},"nodeName":"n1","devices":[]}}`, "ResourceSlice"},
		{"/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"d1"}}`, "Status"},
		{"/apis/rbac.authorization.k8s.io/v1/clusterroles", `{"metadata":{"name":"d1"}}`, "Status"},
	} {
		if err := rc.Post().AbsPath(tc.path).Body([]byte(tc.body)).SetHeader("Content-Type", "application/json").Do(ctx).Error(); err != nil {
			t.Errorf("create in %s: %v", tc.path, err)
			continue
		}
		raw, err := rc.Delete().AbsPath(tc.path + "/" + nameOf(t, tc.body)).Do(ctx).Raw()
		if err != nil {
			t.Errorf("delete in %s: %v", tc.path, err)
			continue
		}
		var got struct{ Kind string }
		if err := json.Unmarshal(raw, &got); err != nil || got.Kind != tc.want {
			t.Errorf("delete in %s answered %q (%v), want a %s", tc.path, got.Kind, err, tc.want)
		}
	}
}

func nameOf(t *testing.T, body string) string {
	t.Helper()
	var o struct{ Metadata struct{ Name string } }
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	return o.Metadata.Name
}

// startRESTClient starts a kapitest server on the memory backend and
// returns a REST client of it (the core group's, whose AbsPath reaches
// every group).
func startRESTClient(t *testing.T) rest.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(kapitest.Start(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	return cs.CoreV1().RESTClient()
}
