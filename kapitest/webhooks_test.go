package kapitest_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// Webhook configurations from manifests are installed pointing at a
// webhook server the test runs with the generated pair, and the server
// calls it: a ConfigMap named deny-me is refused in a labelled namespace.
func TestWebhookInstall(t *testing.T) {
	probe := kapitest.Start(t)
	resources, err := kubernetes.NewForConfigOrDie(probe.Config).Discovery().ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	served := err == nil
	if served {
		served = false
		for _, r := range resources.APIResources {
			served = served || r.Name == "validatingwebhookconfigurations"
		}
	}
	if !served {
		t.Fatalf("admissionregistration.k8s.io/v1 validatingwebhookconfigurations not served (discovery error: %v)", err)
	}

	o := &kapitest.WebhookInstallOptions{Paths: []string{"testdata/webhooks"}}
	srv := kapitest.Start(t, kapitest.WithWebhooks(o))
	pair, err := tls.LoadX509KeyPair(filepath.Join(o.LocalServingCertDir, "tls.crt"), filepath.Join(o.LocalServingCertDir, "tls.key"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort)), &tls.Config{Certificates: []tls.Certificate{pair}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/validate-v1-configmap", func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		allowed := review.Request.Name != "deny-me"
		review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: allowed}
		if !allowed {
			review.Response.Result = &metav1.Status{Message: "deny-me is denied by the test webhook"}
		}
		review.Request = nil
		_ = json.NewEncoder(w).Encode(&review)
	})
	hs := &http.Server{Handler: mux}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })

	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "hooked", Labels: map[string]string{"webhook-test": "true"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("hooked").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ok"}}, metav1.CreateOptions{}); err != nil {
		t.Errorf("create an allowed ConfigMap: %v", err)
	}
	_, err = cs.CoreV1().ConfigMaps("hooked").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "deny-me"}}, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "deny-me is denied by the test webhook") {
		t.Errorf("create deny-me: got %v, want the webhook's denial", err)
	}
}
