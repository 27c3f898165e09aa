package controlplane_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestDRACELSelectorsThroughServer: selector expressions are compiled when
// DeviceClasses, ResourceClaims and ResourceClaimTemplates are written;
// errors are upstream's 422 field errors (see
// pkg/controlplane/validation/resource/celselector_test.go for their
// sources).
func TestDRACELSelectorsThroughServer(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	sel := func(expr string) []resourcev1.DeviceSelector {
		return []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}}
	}
	class := &resourcev1.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"},
		Spec: resourcev1.DeviceClassSpec{Selectors: sel(`device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "a100"`)}}
	if _, err := cs.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := class.DeepCopy()
	bad.Name = "bad.example.com"
	bad.Spec.Selectors = sel(`device.attributes[true].someBoolean`)
	_, err := cs.ResourceV1().DeviceClasses().Create(ctx, bad, metav1.CreateOptions{})
	want := `DeviceClass.resource.k8s.io "bad.example.com" is invalid: spec.selectors[0].cel.expression: Invalid value: "device.attributes[true].someBoolean": compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' applied to '(map(string, map(string, any)), bool)'`
	if !apierrors.IsInvalid(err) || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want 422 %s", err, want)
	}
	// An update that breaks the stored selector is refused too.
	upd, err := cs.ResourceV1().DeviceClasses().Get(ctx, class.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	upd.Spec.Selectors = sel(`device.driver`)
	_, err = cs.ResourceV1().DeviceClasses().Update(ctx, upd, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.selectors[0].cel.expression: Invalid value: "device.driver": must evaluate to bool or the unknown type, not string`) {
		t.Errorf("update: got %v", err)
	}

	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "dra"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
		Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "gpu.example.com", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1,
			Selectors: sel(`device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`),
		}}},
	}}}
	if _, err := cs.ResourceV1().ResourceClaims("dra").Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	costly := claim.DeepCopy()
	costly.Name = "costly"
	costly.Spec.Devices.Requests[0].Exactly.Selectors = sel(`[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))`)
	_, err = cs.ResourceV1().ResourceClaims("dra").Create(ctx, costly, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.devices.requests[0].exactly.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit") {
		t.Errorf("costly claim: got %v", err)
	}
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Spec: resourcev1.ResourceClaimTemplateSpec{Spec: claim.Spec}}
	tmpl.Spec.Spec.Devices.Requests[0].Exactly.Selectors = sel(`device.name == "gpu-0"`)
	_, err = cs.ResourceV1().ResourceClaimTemplates("dra").Create(ctx, tmpl, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.spec.devices.requests[0].exactly.selectors[0].cel.expression: Invalid value: "device.name == \"gpu-0\"": compilation failed: ERROR: <input>:1:7: undefined field 'name'`) {
		t.Errorf("template: got %v", err)
	}
}
