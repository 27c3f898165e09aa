package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

// TestFrontProxyAuthentication: a client holding the front-proxy client
// certificate may assert a user in X-Remote-* headers; anyone else's
// headers are ignored. The user as authenticated is read back with a
// SelfSubjectReview (what kubectl auth whoami does).
func TestFrontProxyAuthentication(t *testing.T) {
	srv := kapitest.Start(t)
	certDir := filepath.Join(srv.DataDir(), "pki")
	proxyCert, err := tls.LoadX509KeyPair(filepath.Join(certDir, pki.FrontProxyClientCertFile), filepath.Join(certDir, pki.FrontProxyClientKeyFile))
	if err != nil {
		t.Fatalf("front-proxy client certificate: %v", err)
	}
	tlsCfg, err := rest.TLSConfigFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	roots := tlsCfg.RootCAs
	adminCerts := tlsCfg.Certificates
	if len(adminCerts) == 0 && tlsCfg.GetClientCertificate != nil {
		c, err := tlsCfg.GetClientCertificate(&tls.CertificateRequestInfo{})
		if err != nil {
			t.Fatal(err)
		}
		adminCerts = []tls.Certificate{*c}
	}

	review := func(certs []tls.Certificate, headers map[string][]string) (int, authenticationv1.UserInfo) {
		t.Helper()
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}}}
		body := []byte(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`)
		req, _ := http.NewRequest(http.MethodPost, srv.Config.Host+"/apis/authentication.k8s.io/v1/selfsubjectreviews", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, vs := range headers {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("POST selfsubjectreviews: %v", err)
		}
		defer res.Body.Close()
		var out authenticationv1.SelfSubjectReview
		if res.StatusCode == http.StatusCreated {
			if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
		}
		return res.StatusCode, out.Status.UserInfo
	}
	asserted := map[string][]string{
		"X-Remote-User":                     {"alice"},
		"X-Remote-Group":                    {"devs", "ops"},
		"X-Remote-Extra-Scopes":             {"read"},
		"X-Remote-Extra-Example.com%2fteam": {"blue"},
	}

	code, u := review([]tls.Certificate{proxyCert}, asserted)
	if code != http.StatusCreated || u.Username != "alice" || !slices.Equal(u.Groups, []string{"devs", "ops", "system:authenticated"}) ||
		!slices.Equal([]string(u.Extra["scopes"]), []string{"read"}) || !slices.Equal([]string(u.Extra["example.com/team"]), []string{"blue"}) {
		t.Errorf("front proxy asserting alice: got %d %+v, want 201 alice in devs, ops, system:authenticated with extras", code, u)
	}

	// The admin's own certificate: the headers are ignored.
	code, u = review(adminCerts, asserted)
	if code != http.StatusCreated || u.Username != pki.AdminUser {
		t.Errorf("admin certificate with X-Remote-User: got %d %+v, want 201 as %s", code, u, pki.AdminUser)
	}

	// The proxy certificate without a user header fails x509 authentication: 401.
	if code, _ := review([]tls.Certificate{proxyCert}, nil); code != http.StatusUnauthorized {
		t.Errorf("front-proxy certificate without headers: got %d, want 401 (the x509 authenticator rejects it, as upstream)", code)
	}

	// The front-proxy settings are published for aggregated API servers
	// (what k8s.io/apiserver-based servers read at start).
	var cm *corev1.ConfigMap
	eventually(t, time.Minute, "kube-system/extension-apiserver-authentication", func() error {
		var err error
		cm, err = kubernetes.NewForConfigOrDie(srv.Config).CoreV1().ConfigMaps("kube-system").Get(t.Context(), "extension-apiserver-authentication", metav1.GetOptions{})
		return err
	})
	for key, want := range map[string]string{
		"requestheader-username-headers":     `["X-Remote-User"]`,
		"requestheader-group-headers":        `["X-Remote-Group"]`,
		"requestheader-extra-headers-prefix": `["X-Remote-Extra-"]`,
		"requestheader-allowed-names":        `["front-proxy-client"]`,
	} {
		if got := cm.Data[key]; got != want {
			t.Errorf("configmap %s: got %q, want %q", key, got, want)
		}
	}
	frontProxyCA, err := os.ReadFile(filepath.Join(certDir, pki.FrontProxyCACertFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Data["requestheader-client-ca-file"], strings.TrimSpace(string(frontProxyCA))) {
		t.Error("configmap requestheader-client-ca-file does not hold the front-proxy CA")
	}
	if !strings.Contains(cm.Data["client-ca-file"], "BEGIN CERTIFICATE") {
		t.Errorf("configmap client-ca-file: got %q, want the client CA", cm.Data["client-ca-file"])
	}

	// kubectl auth whoami (kubectl >= 1.28 asks authentication.k8s.io/v1).
	for _, kubectl := range kubectls(t) {
		if strings.HasSuffix(kubectl, ".1.27") {
			continue
		}
		out, stderr, err := runKubectl(t, kubectl, srv.Kubeconfig, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
		if err != nil || out != pki.AdminUser {
			t.Errorf("%s auth whoami: got %q (%v %s), want %s", filepath.Base(kubectl), out, err, stderr, pki.AdminUser)
		}
	}
}
