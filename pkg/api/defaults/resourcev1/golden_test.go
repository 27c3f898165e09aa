package resourcev1_test

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/pkg/api/defaults/resourcev1"
	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

func decode(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj, _, err := scheme.Codecs.UniversalDecoder(resourceapi.SchemeGroupVersion).Decode(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestClaimTemplateDefaults: the decoder (request bodies, patches,
// storage reads) applies the device request defaults.
func TestClaimTemplateDefaults(t *testing.T) {
	got := decode(t, "testdata/claimtemplate-docs.yaml")
	b, err := os.ReadFile("testdata/claimtemplate-docs.defaulted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &resourceapi.ResourceClaimTemplate{}
	if err := yaml.UnmarshalStrict(b, want); err != nil {
		t.Fatal(err)
	}
	want.APIVersion, want.Kind = "", ""
	g := got.(*resourceapi.ResourceClaimTemplate)
	g.APIVersion, g.Kind = "", ""
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("defaulted template (-want +got):\n%s", diff)
	}
}

func TestSliceTaintDefaults(t *testing.T) {
	now := time.Date(2026, 11, 26, 4, 30, 15, 500, time.UTC)
	resourcev1.Now = func() time.Time { return now }
	t.Cleanup(func() { resourcev1.Now = time.Now })
	s := decode(t, "testdata/slice-taint.yaml").(*resourceapi.ResourceSlice)
	ta := s.Spec.Devices[0].Taints[0].TimeAdded
	if ta == nil || !ta.Time.Equal(now.Truncate(time.Second)) {
		t.Errorf("timeAdded %v, want %v", ta, now.Truncate(time.Second))
	}
}

// TestTolerationOperatorDefault: a toleration's operator defaults to Equal
// in exactly and firstAvailable requests and in allocation results
// (+default="Equal", k8s.io/kubernetes@v1.37.2
// pkg/apis/resource/v1/zz_generated.defaults.go); kube-apiserver v1.37.2
// echoes "operator":"Equal" for a subrequest toleration sent without one.
func TestTolerationOperatorDefault(t *testing.T) {
	obj, _, err := scheme.Codecs.UniversalDecoder(resourceapi.SchemeGroupVersion).Decode([]byte(`{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"c"},
		"spec":{"devices":{"requests":[{"name":"a","exactly":{"deviceClassName":"c","tolerations":[{"key":"k"}]}},
			{"name":"b","firstAvailable":[{"name":"s","deviceClassName":"c","tolerations":[{"key":"k"},{"operator":"Exists"}]}]}]}},
		"status":{"allocation":{"devices":{"results":[{"request":"a","driver":"d","pool":"p","device":"x","tolerations":[{"key":"k"}]}]}}}}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := obj.(*resourceapi.ResourceClaim)
	got := []resourceapi.DeviceTolerationOperator{
		c.Spec.Devices.Requests[0].Exactly.Tolerations[0].Operator,
		c.Spec.Devices.Requests[1].FirstAvailable[0].Tolerations[0].Operator,
		c.Spec.Devices.Requests[1].FirstAvailable[0].Tolerations[1].Operator,
		c.Status.Allocation.Devices.Results[0].Tolerations[0].Operator,
	}
	want := []resourceapi.DeviceTolerationOperator{"Equal", "Equal", "Exists", "Equal"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("operators (-want +got):\n%s", diff)
	}
}
