package aggregator

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/discovery"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/server/filters"
	"github.com/kapi-dev/kapi/pkg/storage/memory"
)

// ---- a small PKI ----

type certKey struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func (c *certKey) tlsCert() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{c.cert.Raw}, PrivateKey: c.key, Leaf: c.cert}
}

func (c *certKey) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.cert)
	return p
}

var serial int64 = 1
var serialMu sync.Mutex

func newCert(t *testing.T, cn string, parent *certKey, isCA bool, dnsNames []string, usage x509.ExtKeyUsage) *certKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serialMu.Lock()
	serial++
	sn := serial
	serialMu.Unlock()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(sn),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     dnsNames,
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	}
	parentCert, parentKey := tmpl, key
	if parent != nil {
		parentCert, parentKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parentCert, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &certKey{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// pki is the test's certificates: a serving CA (the caBundle of
// APIServices) and a front-proxy CA with the aggregator's client cert.
type pki struct {
	servingCA    *certKey
	frontProxyCA *certKey
	proxyClient  *certKey
}

func newPKI(t *testing.T) *pki {
	servingCA := newCert(t, "serving-ca", nil, true, nil, 0)
	fpCA := newCert(t, "front-proxy-ca", nil, true, nil, 0)
	return &pki{
		servingCA:    servingCA,
		frontProxyCA: fpCA,
		proxyClient:  newCert(t, "front-proxy-client", fpCA, false, nil, x509.ExtKeyUsageClientAuth),
	}
}

// ---- services ----

// services is a ServiceLister over maps.
type services struct {
	mu        sync.Mutex
	services  map[string]*corev1.Service
	slices    map[string][]discoveryv1.EndpointSlice
	endpoints map[string]*corev1.Endpoints
}

func newServices() *services {
	return &services{services: map[string]*corev1.Service{}, slices: map[string][]discoveryv1.EndpointSlice{}, endpoints: map[string]*corev1.Endpoints{}}
}

func (s *services) GetService(_ context.Context, ns, name string) (*corev1.Service, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if svc, ok := s.services[ns+"/"+name]; ok {
		return svc.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("services"), name)
}

func (s *services) ListEndpointSlices(_ context.Context, ns, name string) ([]discoveryv1.EndpointSlice, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []discoveryv1.EndpointSlice
	for _, sl := range s.slices[ns+"/"+name] {
		out = append(out, *sl.DeepCopy())
	}
	return out, nil
}

func (s *services) GetEndpoints(_ context.Context, ns, name string) (*corev1.Endpoints, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.endpoints[ns+"/"+name]; ok {
		return e.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(corev1.Resource("endpoints"), name)
}

// setService adds ns/name with one port 443 named "https" (targetPort
// any: the slices carry the real one).
func (s *services) setService(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.services[ns+"/"+name] = &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: []corev1.ServicePort{{Name: "https", Port: 443}}},
	}
}

func (s *services) deleteService(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.services, ns+"/"+name)
}

// setEndpoint makes addr ("host:port") the one ready endpoint of ns/name
// (port "https"); "" removes its slices.
func (s *services) setEndpoint(ns, name, addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if addr == "" {
		delete(s.slices, ns+"/"+name)
		return
	}
	host, portStr, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portStr)
	s.slices[ns+"/"+name] = []discoveryv1.EndpointSlice{{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name + "-abc", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(int32(port))}},
	}}
}

// ---- backends ----

// backend is an extension API server: TLS with a certificate for
// <name>.<ns>.svc from the serving CA, requiring a client certificate
// from the front-proxy CA.
type backend struct {
	srv  *httptest.Server
	addr string
}

func startBackend(t *testing.T, p *pki, ns, name string, h http.Handler, addr string) *backend {
	t.Helper()
	serving := newCert(t, name+"."+ns+".svc", p.servingCA, false, []string{name + "." + ns + ".svc"}, x509.ExtKeyUsageServerAuth)
	srv := httptest.NewUnstartedServer(h)
	if addr != "" {
		var l net.Listener
		var err error
		deadline := time.Now().Add(5 * time.Second)
		for {
			if l, err = net.Listen("tcp", addr); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("listen again on %s: %v", addr, err)
		}
		_ = srv.Listener.Close()
		srv.Listener = l
	}
	srv.EnableHTTP2 = true
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are expected
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{serving.tlsCert()},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.frontProxyCA.pool(),
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return &backend{srv: srv, addr: srv.Listener.Addr().String()}
}

// ---- the aggregator ----

// testUser is who every request to the aggregator is authenticated as.
var testUser = &user.Info{Name: "alice", UID: "uid-1", Groups: []string{"devs", "system:authenticated"}, Extra: map[string][]string{"scopes": {"a", "b"}}}

type testServer struct {
	s    *server.GenericServer
	agg  *Aggregator
	disc *discovery.Manager
	svcs *services
	srv  *httptest.Server
	stop chan struct{}
	once sync.Once
	// metrics is the server's registry.
	metrics *prometheus.Registry

	changesMu sync.Mutex
	changes   [][]string
}

type options struct {
	pki              *pki
	period           time.Duration
	discoveryTimeout time.Duration
	builtin          []schema.GroupVersion
	noStart          bool
	serviceChanges   <-chan types.NamespacedName
}

func startServer(t *testing.T, o options) *testServer {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	b := memory.NewBackend(memory.BackendConfig{})
	t.Cleanup(func() { _ = b.Close() })
	cfg := server.NewConfig(logger)
	cfg.BuildHandlerChainFunc = func(h http.Handler, c *server.Config) http.Handler {
		inner := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inner.ServeHTTP(w, r.WithContext(request.WithUser(r.Context(), testUser)))
		})
		return filters.WithRequestInfo(h, request.NewResolver(), c.Logger)
	}
	completed, err := cfg.Complete()
	if err != nil {
		t.Fatal(err)
	}
	s, err := completed.New("kube-aggregator", server.NewEmptyDelegate(server.NotFoundHandler()))
	if err != nil {
		t.Fatal(err)
	}
	disc, err := discovery.New(discovery.Config{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	builtin := o.builtin
	if builtin == nil {
		builtin = []schema.GroupVersion{{Version: "v1"}, {Group: "apps", Version: "v1"}}
	}
	for _, gv := range builtin {
		if err := disc.AddGroupVersion(gv, nil); err != nil {
			t.Fatal(err)
		}
	}
	disc.Install(s.Handler().NonRESTMux)
	ts := &testServer{s: s, disc: disc, svcs: newServices(), stop: make(chan struct{})}
	var cert *tls.Certificate
	if o.pki != nil {
		c := o.pki.proxyClient.tlsCert()
		cert = &c
	}
	period := o.period
	if period == 0 {
		period = 200 * time.Millisecond
	}
	agg, err := Install(s, Config{
		Storage:            generic.MemoryStorage(b),
		Discovery:          disc,
		Services:           ts.svcs,
		ProxyClientCert:    cert,
		MinRequestTimeout:  time.Minute,
		AvailabilityPeriod: period,
		DiscoveryTimeout:   o.discoveryTimeout,
		ServiceChanges:     o.serviceChanges,
		OnChange: func(list []*apiregistrationv1.APIService) {
			names := make([]string, len(list))
			for i, s := range list {
				names[i] = s.Name
			}
			ts.changesMu.Lock()
			ts.changes = append(ts.changes, names)
			ts.changesMu.Unlock()
		},
		Logger:          logger,
		MetricsRegistry: cfg.MetricsRegistry,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.agg = agg
	ts.metrics = cfg.MetricsRegistry
	ts.srv = httptest.NewUnstartedServer(s.Handler())
	ts.srv.EnableHTTP2 = true
	ts.srv.StartTLS()
	t.Cleanup(ts.close)
	if o.noStart {
		return ts
	}
	ts.run(t)
	return ts
}

// run starts the hooks and waits for the registration signal.
func (ts *testServer) run(t *testing.T) {
	t.Helper()
	if _, _, err := ts.s.PrepareRun().NonBlockingRun(ts.stop, time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ts.s.MuxAndDiscoveryCompleteSignals()[RegistrationSignal]:
	case <-time.After(10 * time.Second):
		t.Fatal("APIServiceRegistrationControllerInitiated not closed within 10s")
	}
}

func (ts *testServer) close() {
	ts.once.Do(func() {
		ts.srv.Close()
		close(ts.stop)
		ts.s.Destroy()
	})
}

func (ts *testServer) config() *rest.Config {
	return &rest.Config{Host: ts.srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: -1}
}

func (ts *testServer) client(t *testing.T) aggregatorclient.Interface {
	t.Helper()
	c, err := aggregatorclient.NewForConfig(ts.config())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// httpClient talks to the aggregator (HTTP/2 when h2, else HTTP/1.1).
func (ts *testServer) httpClient(h2 bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: h2}
	if !h2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &http.Client{Transport: tr}
}

// remoteAPIService is an APIService for group/version served by ns/name,
// verified against caBundle.
func remoteAPIService(group, version, ns, name string, caBundle []byte) *apiregistrationv1.APIService {
	return &apiregistrationv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: version + "." + group},
		Spec: apiregistrationv1.APIServiceSpec{
			Group: group, Version: version,
			Service:              &apiregistrationv1.ServiceReference{Namespace: ns, Name: name},
			CABundle:             caBundle,
			GroupPriorityMinimum: 1000, VersionPriority: 15,
		},
	}
}

// waitCondition polls name's Available condition until ok accepts it.
func waitCondition(t *testing.T, c aggregatorclient.Interface, name string, within time.Duration, ok func(*apiregistrationv1.APIServiceCondition) bool) *apiregistrationv1.APIService {
	t.Helper()
	deadline := time.Now().Add(within)
	var last *apiregistrationv1.APIService
	for {
		svc, err := c.ApiregistrationV1().APIServices().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			last = svc
			for i := range svc.Status.Conditions {
				if svc.Status.Conditions[i].Type == apiregistrationv1.Available && ok(&svc.Status.Conditions[i]) {
					return svc
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: condition not reached within %v: err=%v status=%+v", name, within, err, statusOf(last))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func statusOf(svc *apiregistrationv1.APIService) any {
	if svc == nil {
		return nil
	}
	return svc.Status
}

func reason(r string) func(*apiregistrationv1.APIServiceCondition) bool {
	return func(c *apiregistrationv1.APIServiceCondition) bool { return c.Reason == r }
}

// eventually polls f until it returns nil.
func eventually(t *testing.T, within time.Duration, f func() error) {
	t.Helper()
	testwait.For(t, within, 20*time.Millisecond, "condition", f)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func splitAddr(t *testing.T, addr string) (string, int32) {
	t.Helper()
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return host, int32(n)
}
