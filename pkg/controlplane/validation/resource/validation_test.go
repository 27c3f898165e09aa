package resource

import (
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func render(errs field.ErrorList) string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return strings.Join(out, "\n")
}

func exact(name, class string) resourcev1.DeviceRequest {
	return resourcev1.DeviceRequest{Name: name, Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: "ExactCount", Count: 1}}
}

// TestValidateClaim: the errors users hit most, with upstream's paths and
// messages (pkg/apis/resource/validation/validation.go, v1.37).
func TestValidateClaim(t *testing.T) {
	tests := []struct {
		name  string
		claim resourcev1.DeviceClaim
		want  string
	}{
		{"valid", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exact("gpu", "gpu.example.com")}}, ""},
		{"no request name", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exact("", "gpu.example.com")}},
			`spec.devices.requests[0].name: Invalid value: "": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"duplicate request", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exact("gpu", "a.example.com"), exact("gpu", "b.example.com")}},
			// The declarative uniqueness error shows the whole request.
			`spec.devices.requests[1]: Duplicate value: {"name":"gpu","exactly":{"deviceClassName":"b.example.com","allocationMode":"ExactCount","count":1}}`},
		{"neither exactly nor firstAvailable", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu"}}},
			"spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"},
		{"both", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu",
			Exactly:        &resourcev1.ExactDeviceRequest{DeviceClassName: "a", AllocationMode: "ExactCount", Count: 1},
			FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "x", DeviceClassName: "a", AllocationMode: "ExactCount", Count: 1}}}}},
			"spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"},
		{"no class", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exact("gpu", "")}},
			"spec.devices.requests[0].exactly.deviceClassName: Required value"},
		{"bad class", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exact("gpu", "GPU")}},
			`spec.devices.requests[0].exactly.deviceClassName: Invalid value: "GPU": a lowercase RFC 1123 subdomain`},
		{"zero count", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "a", AllocationMode: "ExactCount"}}}},
			"spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero"},
		{"count with All", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "a", AllocationMode: "All", Count: 2}}}},
			"spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"},
		{"bad mode", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "a", AllocationMode: "Some", Count: 1}}}},
			`spec.devices.requests[0].exactly.allocationMode: Unsupported value: "Some": supported values: "All", "ExactCount"`},
		{"selector without cel", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "a", AllocationMode: "ExactCount", Count: 1, Selectors: []resourcev1.DeviceSelector{{}}}}}},
			"spec.devices.requests[0].exactly.selectors[0].cel: Required value"},
		{"constraint on unknown request", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exact("gpu", "a")},
			Constraints: []resourcev1.DeviceConstraint{{Requests: []string{"nic"}, MatchAttribute: ptr.To[resourcev1.FullyQualifiedName]("example.com/numa")}}},
			`spec.devices.constraints[0].requests[0]: Invalid value: "nic": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'`},
		{"config without driver", resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exact("gpu", "a")},
			Config: []resourcev1.DeviceClaimConfiguration{{DeviceConfiguration: resourcev1.DeviceConfiguration{Opaque: &resourcev1.OpaqueDeviceConfiguration{Parameters: runtime.RawExtension{Raw: []byte(`{}`)}}}}}},
			"spec.devices.config[0].opaque.driver: Required value"},
	}
	for _, tc := range tests {
		got := render(ValidateResourceClaim(&resourcev1.ResourceClaim{Spec: resourcev1.ResourceClaimSpec{Devices: tc.claim}}))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

func TestClaimUpdates(t *testing.T) {
	old := &resourcev1.ResourceClaim{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{exact("gpu", "a")}}}}
	upd := old.DeepCopy()
	upd.Spec.Devices.Requests[0].Exactly.Count = 2
	if got := render(ValidateResourceClaimUpdate(upd, old)); !strings.HasPrefix(got, "spec: Invalid value:") || !strings.HasSuffix(got, "field is immutable") {
		t.Errorf("spec change: %s", got)
	}
	st := old.DeepCopy()
	st.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: types.UID("u")}}
	if got := render(ValidateResourceClaimStatusUpdate(st, old)); got != "status.reservedFor: Forbidden: may not be specified when `allocated` is not set" {
		t.Errorf("reserved without allocation: %s", got)
	}
	st.Status.Allocation = &resourcev1.AllocationResult{AllocationTimestamp: ptr.To(metav1.Now())}
	st.Status.ReservedFor = append(st.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: "q", UID: "u"})
	if got := render(ValidateResourceClaimStatusUpdate(st, old)); got != `status.reservedFor[1].uid: Duplicate value: "u"` {
		t.Errorf("duplicate consumer: %s", got)
	}
}

func TestValidateSlice(t *testing.T) {
	valid := func() *resourcev1.ResourceSlice {
		return &resourcev1.ResourceSlice{Spec: resourcev1.ResourceSliceSpec{
			Driver: "gpu.example.com", NodeName: ptr.To("node-1"),
			Pool:    resourcev1.ResourcePool{Name: "node-1", ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu-0", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To("a100")}}}},
		}}
	}
	tests := []struct {
		name   string
		mutate func(*resourcev1.ResourceSlice)
		want   string
	}{
		{"valid", func(*resourcev1.ResourceSlice) {}, ""},
		{"no driver", func(s *resourcev1.ResourceSlice) { s.Spec.Driver = "" }, "spec.driver: Required value"},
		{"no pool", func(s *resourcev1.ResourceSlice) { s.Spec.Pool.Name = "" }, "spec.pool.name: Required value"},
		{"no slice count", func(s *resourcev1.ResourceSlice) { s.Spec.Pool.ResourceSliceCount = 0 }, "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero"},
		{"no node", func(s *resourcev1.ResourceSlice) { s.Spec.NodeName = nil },
			"spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"},
		{"node and all", func(s *resourcev1.ResourceSlice) { s.Spec.AllNodes = ptr.To(true) },
			"spec: Invalid value: null: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"},
		{"duplicate device", func(s *resourcev1.ResourceSlice) { s.Spec.Devices = append(s.Spec.Devices, s.Spec.Devices[0]) },
			`spec.devices[1].name: Duplicate value: "gpu-0"`},
		{"two attribute values", func(s *resourcev1.ResourceSlice) {
			s.Spec.Devices[0].Attributes["model"] = resourcev1.DeviceAttribute{StringValue: ptr.To("a"), IntValue: ptr.To[int64](1)}
		}, `spec.devices[0].attributes[model]: Invalid value:`},
	}
	for _, tc := range tests {
		s := valid()
		tc.mutate(s)
		got := render(ValidateResourceSlice(s))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
	upd := valid()
	upd.Spec.Driver = "other.example.com"
	if got := render(ValidateResourceSliceUpdate(upd, valid())); got != `spec.driver: Invalid value: "other.example.com": field is immutable` {
		t.Errorf("driver change: %s", got)
	}
}
