package handlers

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// IntOrStrings of a type other than int or string are found wherever they
// sit in an object, with their path; valid ones and objects without any
// pass.
func TestCheckIntOrStrings(t *testing.T) {
	bad := intstr.IntOrString{Type: 7, IntVal: 3}
	tests := []struct {
		name string
		obj  any
		want []string
	}{
		{"valid service", &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{TargetPort: intstr.FromInt32(8080)}, {TargetPort: intstr.FromString("http")}}}}, nil},
		{"service target port", &corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{}, {TargetPort: bad}}}}, []string{"spec.ports[1].targetPort"}},
		{"pointer field", &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &bad}}}}, []string{"spec.strategy.rollingUpdate.maxSurge"}},
		{"nested probe", &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: bad}}}}}}}, []string{"spec.containers[0].livenessProbe.httpGet.port"}},
		{"two", &policyv1.PodDisruptionBudget{Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &bad, MaxUnavailable: &bad}}, []string{"spec.minAvailable", "spec.maxUnavailable"}},
		{"no int-or-string", &corev1.ConfigMap{Data: map[string]string{"a": "b"}}, nil},
		{"nil", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := checkIntOrStrings(tt.obj)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("got %v, want %v (%v)", got, tt.want, errs)
			}
		})
	}
	if mayHoldIntOrString(reflect.TypeFor[corev1.ConfigMap]()) {
		t.Error("ConfigMap: got may hold an IntOrString, want not")
	}
}

// A panic in a guarded step is a 400 naming the step; an error passes
// through; http.ErrAbortHandler is not swallowed.
func TestGuard(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	err := guard(logger, "decoding the request body", func() error { panic("impossible IntOrString.Type") })
	if !apierrors.IsBadRequest(err) || err.Error() != "decoding the request body: the request's content could not be processed: impossible IntOrString.Type" {
		t.Errorf("panic: got %v", err)
	}
	want := errors.New("plain")
	if err := guard(logger, "x", func() error { return want }); err != want {
		t.Errorf("error: got %v, want %v", err, want)
	}
	defer func() {
		if p := recover(); p != http.ErrAbortHandler {
			t.Errorf("abort: recovered %v, want http.ErrAbortHandler", p)
		}
	}()
	_ = guard(logger, "x", func() error { panic(http.ErrAbortHandler) })
	t.Error("abort: guard returned")
}

// deepSchema is a JSONSchemaProps nested depth times through properties.
func deepSchema(depth int) *apiextensionsv1.JSONSchemaProps {
	s := apiextensionsv1.JSONSchemaProps{Type: "string"}
	for range depth {
		s = apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"a": s}}
	}
	return &s
}

// Only recursive types are walked; their nesting is counted as in JSON
// (a schema level is two: its object and its properties map) and refused
// past 10000, the JSON and YAML decoders' limit.
func TestCheckNestingDepth(t *testing.T) {
	if mayNestWithoutBound(reflect.TypeFor[*corev1.Pod]()) || !mayNestWithoutBound(reflect.TypeFor[*apiextensionsv1.CustomResourceDefinition]()) {
		t.Fatal("want Pod bounded and CustomResourceDefinition recursive")
	}
	crd := func(depth int) *apiextensionsv1.CustomResourceDefinition {
		return &apiextensionsv1.CustomResourceDefinition{Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: deepSchema(depth)}}},
		}}
	}
	// crd, spec, versions, version, schema, openAPIV3Schema: 6 levels,
	// then 2 per nested schema.
	if err := checkNestingDepth(crd((maxNestingDepth - 6) / 2)); err != nil {
		t.Errorf("at the limit: got %v, want nil", err)
	}
	if err := checkNestingDepth(crd((maxNestingDepth-6)/2 + 1)); err == nil || err.Error() != "exceeded max depth of 10000" {
		t.Errorf("over the limit: got %v, want exceeded max depth of 10000", err)
	}
	if err := checkNestingDepth(&corev1.Pod{}); err != nil {
		t.Errorf("pod: got %v", err)
	}
}
