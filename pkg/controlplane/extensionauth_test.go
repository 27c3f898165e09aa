package controlplane

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
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/requestheader"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/configmap"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/namespace"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

func caPEM(t *testing.T, cn string, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: notAfter.Add(-24 * time.Hour), NotAfter: notAfter,
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestCombineAuthInfo(t *testing.T) {
	now := time.Now()
	clientCA, otherCA, expired := caPEM(t, "client", now.Add(time.Hour)), caPEM(t, "other", now.Add(time.Hour)), caPEM(t, "old", now.Add(-time.Hour))
	rhCA := caPEM(t, "front-proxy", now.Add(time.Hour))
	required := requestheader.AuthenticationConfigMapData([]byte(clientCA), requestheader.Config{
		UsernameHeaders: []string{"X-Remote-User"}, GroupHeaders: []string{"X-Remote-Group"},
		ExtraHeaderPrefixes: []string{"X-Remote-Extra-"}, AllowedNames: []string{"front-proxy-client"},
	}, []byte(rhCA))
	tests := []struct {
		name     string
		existing map[string]string
		want     map[string]string
	}{
		{"nothing yet", nil, required},
		{"the same", required, required},
		{"another server's CA and headers, an expired CA, an unknown key, a damaged list", map[string]string{
			keyClientCA:      otherCA + expired,
			keyRHUsername:    `["X-Other-User"]`,
			keyRHGroup:       `not json`,
			"something-else": "x",
		}, func() map[string]string {
			m := maps.Clone(required)
			m[keyClientCA] = otherCA + clientCA
			m[keyRHUsername] = `["X-Other-User","X-Remote-User"]`
			return m
		}()},
		{"no requestheader CA wanted or present: no requestheader keys", map[string]string{keyRHUsername: `["X"]`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := required
			if tt.want == nil {
				req = map[string]string{keyClientCA: clientCA}
				tt.want = req
			}
			info, err := parseAuthInfo(req, true)
			if err != nil {
				t.Fatal(err)
			}
			c := &clusterAuthInfo{required: info, now: func() time.Time { return now }}
			if got := c.merged(tt.existing); !maps.Equal(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}
	if _, err := parseAuthInfo(map[string]string{keyRHAllowed: "[nope"}, true); err == nil {
		t.Error("got no error for a damaged required list, want one")
	}
}

// TestClusterAuthInfoController runs the controller on real stores: it
// waits for kube-system, creates the configmap, and puts the data back
// when it is changed.
func TestClusterAuthInfoController(t *testing.T) {
	opts := registrytest.Options(t)
	ns, _, _, err := namespace.NewREST(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Destroy)
	cms, err := configmap.NewREST(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cms.Destroy)

	want := map[string]string{keyClientCA: caPEM(t, "client", time.Now().Add(time.Hour))}
	info, err := parseAuthInfo(want, true)
	if err != nil {
		t.Fatal(err)
	}
	c := &clusterAuthInfo{
		configmaps: cms, namespaces: clusterScoped{ns}, required: info,
		interval: 20 * time.Millisecond, logger: slog.New(slog.DiscardHandler), now: time.Now,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(started)
		c.run(ctx, done)
	}()
	defer func() {
		cancel()
		<-started
		<-done
	}()

	// The first sync waits for kube-system.
	select {
	case <-started:
		t.Fatal("got the first sync done before kube-system exists, want it waiting")
	case <-time.After(100 * time.Millisecond):
	}
	if _, err := ns.Create(systemContext(ctx, ""), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: metav1.NamespaceSystem}}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	<-started
	get := func() *corev1.ConfigMap {
		obj, err := cms.Get(systemContext(ctx, metav1.NamespaceSystem), clusterAuthConfigMapName, &metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*corev1.ConfigMap)
	}
	if got := get(); !maps.Equal(got.Data, want) {
		t.Fatalf("got data %v, want %v", got.Data, want)
	}

	// Someone empties it: the periodic reconcile puts the data back.
	cur := get()
	cur.Data = map[string]string{}
	if _, _, err := cms.Update(systemContext(ctx, metav1.NamespaceSystem), clusterAuthConfigMapName, registrytest.Updated{Obj: cur}, rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !maps.Equal(get().Data, want) {
		if time.Now().After(deadline) {
			t.Fatalf("got data %v, want it reconciled to %v", get().Data, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
