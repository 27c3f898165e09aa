package controlplane_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"maps"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer/interim"
	"github.com/kapi-dev/kapi/pkg/auth/requestheader"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/controlplane"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/tokenreview"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// TestInstallWithAuthentication installs the core resources with a token
// authenticator and cluster authentication info, as internal/app is to
// wire them, behind real authentication and authorization filters over
// HTTPS: the configmap is published in kube-system and TokenReviews
// authenticate with the server's own tokens.
func TestInstallWithAuthentication(t *testing.T) {
	authn := authenticator.Union(authenticator.NewTokenAuthenticator(map[string]*user.Info{
		"admin-token": {Name: "admin", Groups: []string{user.SystemPrivileged}},
	}))
	published := requestheader.AuthenticationConfigMapData([]byte(testCA(t)), requestheader.Config{
		UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"}, ExtraHeaderPrefixes: []string{"X-Remote-Extra-"},
	}, []byte(testCA(t)))
	s, disc := installCore(t, func(h http.Handler, c *server.Config) http.Handler {
		h = filters.WithAuthorization(h, interim.Authorizer{}, c.Logger, nil)
		h = filters.WithAuthentication(h, authn, nil, c.Logger, nil)
		return filters.WithRequestInfo(h, request.NewResolver(), c.Logger)
	}, controlplane.Config{
		TokenAuthenticator:               tokenreview.FromRequest(authn),
		ExtensionAPIServerAuthentication: published,
	})
	disc.Install(s.Handler().NonRESTMux)
	ts := httptest.NewUnstartedServer(s.Handler())
	ts.EnableHTTP2 = true
	ts.StartTLS()
	stop := make(chan struct{})
	if _, _, err := s.PrepareRun().NonBlockingRun(stop, time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ts.Close()
		close(stop)
		s.Destroy()
	})

	rc := &rest.Config{Host: ts.URL, BearerToken: "admin-token", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	pollCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		cm, err := cs.CoreV1().ConfigMaps("kube-system").Get(pollCtx, "extension-apiserver-authentication", metav1.GetOptions{})
		if err == nil {
			if !maps.Equal(cm.Data, published) {
				t.Errorf("got data %v, want %v", cm.Data, published)
			}
			break
		}
		if !apierrors.IsNotFound(err) || pollCtx.Err() != nil {
			t.Fatalf("got %v, want the configmap published", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	tests := []struct {
		token    string
		wantAuth bool
		wantUser string
		wantErr  string
	}{
		{"admin-token", true, "admin", ""},
		{"nope", false, "", "invalid bearer token"},
	}
	for _, tt := range tests {
		tr, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: tt.token}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st := tr.Status
		if st.Authenticated != tt.wantAuth || st.User.Username != tt.wantUser || st.Error != tt.wantErr {
			t.Errorf("token %q: got %+v, want authenticated=%v user=%q error=%q", tt.token, st, tt.wantAuth, tt.wantUser, tt.wantErr)
		}
		if tt.wantAuth && !slices.Equal(st.User.Groups, []string{user.SystemPrivileged, user.AllAuthenticated}) {
			t.Errorf("got groups %v, want system:masters, system:authenticated", st.User.Groups)
		}
	}
}

// testCA is a fresh self-signed CA certificate, PEM-encoded.
func testCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// installCore builds a core server (with buildChain as its handler chain
// when not nil) on a new memory backend and installs the core resources
// on it with c, its storage, discovery, logger and request timeout set.
func installCore(t *testing.T, buildChain func(http.Handler, *server.Config) http.Handler, c controlplane.Config) (*server.GenericServer, *discovery.Manager) {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	cfg := server.NewConfig(logger)
	if buildChain != nil {
		cfg.BuildHandlerChainFunc = buildChain
	}
	completed, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	s, err := completed.New("kube-apiserver", server.NewEmptyDelegate(server.NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.New(discovery.Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	c.Storage, c.Discovery, c.MinRequestTimeout, c.Logger = generic.MemoryStorage(b), disc, time.Minute, logger
	if _, err := controlplane.Install(s, c); err != nil {
		t.Fatal(err)
	}
	return s, disc
}

// TestDestroyRightAfterRun destroys the core server as soon as its
// post-start hooks were started: Destroy must wait for them, so that no
// hook starts its controllers and informers on destroyed stores, and no
// destroy function's "did my hook start" check (the webhook and policy
// informers' WaitGroups) races its hook. Under the race detector (as CI
// runs it) the old Destroy failed this test within a few runs with the
// report CI printed for TestInstallWithAuthentication (session 27).
func TestDestroyRightAfterRun(t *testing.T) {
	s, _ := installCore(t, nil, controlplane.Config{})
	stop := make(chan struct{})
	if _, _, err := s.PrepareRun().NonBlockingRun(stop, time.Second); err != nil {
		t.Fatal(err)
	}
	close(stop)
	s.Destroy()
}
