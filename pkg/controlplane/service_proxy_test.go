package controlplane_test

import (
	"encoding/json"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// services/proxy through the server: its errors are upstream's
// (kubernetes/pkg/registry/core/service/storage REST.ResourceLocation and
// k8s.io/apiserver pkg/util/proxy RandomEndpoint, v1.37.2). The API refuses
// loopback endpoint addresses, so no endpoint here is ever contacted:
// web's endpoint is not its pod's IP, bare's has no pod. Proxying to an
// endpoint is tested in package service (proxy_internal_test.go).
func TestServiceProxyErrors(t *testing.T) {
	const backendPort = 8080

	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	const ns = "default"

	pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.PodIP = "192.0.2.99"
	pod.Status.PodIPs = []corev1.PodIP{{IP: "192.0.2.99"}}
	if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web", "bare"} {
		if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	slice := func(svc string, ep discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
		return &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: svc + "-1", Labels: map[string]string{discoveryv1.LabelServiceName: svc}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{ep},
			Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(backendPort))}},
		}
	}
	ready := discoveryv1.EndpointConditions{Ready: ptr(true)}
	for _, s := range []*discoveryv1.EndpointSlice{
		slice("web", discoveryv1.Endpoint{Addresses: []string{"192.0.2.10"}, Conditions: ready,
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "web"}}),
		// No pod behind it.
		slice("bare", discoveryv1.Endpoint{Addresses: []string{"192.0.2.11"}, Conditions: ready}),
	} {
		if _, err := cs.DiscoveryV1().EndpointSlices(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	get := func(id, rest string) (string, error) {
		b, err := cs.CoreV1().RESTClient().Get().AbsPath("/api/v1/namespaces/" + ns + "/services/" + id + "/proxy" + rest).Do(ctx).Raw()
		return string(b), err
	}
	for _, tc := range []struct {
		id   string
		code int32
		msg  string
	}{
		{"web:81", http.StatusServiceUnavailable, `no service port 81 found for service "web"`},
		{"web:http", http.StatusServiceUnavailable, `no endpoints available for service "web"`}, // not the pod's IP
		{"web:80", http.StatusServiceUnavailable, `no endpoints available for service "web"`},   // port 80 is "http"
		{"web", http.StatusServiceUnavailable, `no endpoints available for service "web"`},      // no unnamed port
		{"bare:http", http.StatusServiceUnavailable, `no endpoints available for service "bare"`},
		{"missing:http", http.StatusServiceUnavailable, `no endpoints available for service "missing"`},
		{"missing:80", http.StatusNotFound, `services "missing" not found`},
		{"a:b:c:d", http.StatusBadRequest, `invalid service request "a:b:c:d"`},
	} {
		// The body is the Status (client-go's Raw does not decode it).
		body, err := get(tc.id, "/")
		var st metav1.Status
		if err == nil || json.Unmarshal([]byte(body), &st) != nil || st.Code != tc.code || st.Message != tc.msg {
			t.Errorf("services/%s/proxy: %v %s, want %d %q", tc.id, err, body, tc.code, tc.msg)
		}
	}
}
