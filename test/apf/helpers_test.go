package apf

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/auth/pki"
)

// identities makes HTTP clients that authenticate as any user: through
// the front-proxy client certificate and X-Remote-User/-Group headers
// (kapi's request-header authentication), each user on connections of
// its own.
type identities struct {
	srv   *kapitest.Server
	roots *tls.Config
	proxy tls.Certificate
	admin *http.Client
}

func newIdentities(t *testing.T, srv *kapitest.Server) *identities { return newIdentitiesTB(t, srv) }

func newIdentitiesTB(t testing.TB, srv *kapitest.Server) *identities {
	t.Helper()
	certDir := filepath.Join(srv.DataDir(), "pki")
	proxy, err := tls.LoadX509KeyPair(filepath.Join(certDir, pki.FrontProxyClientCertFile), filepath.Join(certDir, pki.FrontProxyClientKeyFile))
	if err != nil {
		t.Fatalf("front-proxy client certificate: %v", err)
	}
	tlsCfg, err := rest.TLSConfigFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := rest.HTTPClientFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	// These tests measure flow control, not authorization: every user they
	// make may do everything (RBAC is kapi's default), yet only
	// system:masters is exempt from flow control.
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(context.Background(), &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "apf-test-users"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "Group", Name: "system:authenticated"}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("bind the test users: %v", err)
	}
	return &identities{srv: srv, roots: &tls.Config{RootCAs: tlsCfg.RootCAs, MinVersion: tls.VersionTLS12}, proxy: proxy, admin: admin}
}

// userClient is a client for one user.
type userClient struct {
	host   string
	client *http.Client
	user   string
	groups []string
}

func (ids *identities) as(t *testing.T, user string, groups ...string) *userClient {
	return ids.asTB(t, user, groups...)
}

func (ids *identities) asTB(t testing.TB, user string, groups ...string) *userClient {
	cfg := ids.roots.Clone()
	cfg.Certificates = []tls.Certificate{ids.proxy}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true, MaxIdleConnsPerHost: 100}
	t.Cleanup(tr.CloseIdleConnections)
	return &userClient{host: ids.srv.Config.Host, client: &http.Client{Transport: tr, Timeout: time.Minute}, user: user, groups: groups}
}

// get does GET path and returns the status code, the response headers and
// how long it took.
func (u *userClient) get(ctx context.Context, path string) (int, http.Header, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.host+path, nil)
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("X-Remote-User", u.user)
	for _, g := range u.groups {
		req.Header.Add("X-Remote-Group", g)
	}
	start := time.Now()
	res, err := u.client.Do(req)
	if err != nil {
		return 0, nil, 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode, res.Header, time.Since(start), nil
}

// adminGet does GET path as the cluster admin (system:masters).
func (ids *identities) adminGet(t *testing.T, path string) (int, http.Header, string) {
	t.Helper()
	res, err := ids.admin.Get(ids.srv.Config.Host + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

// metrics scrapes /metrics as the admin.
func (ids *identities) metrics(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	code, _, body := ids.adminGet(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// labelsMatch reports whether m has every label of want.
func labelsMatch(m *dto.Metric, want map[string]string) bool {
	n := 0
	for _, l := range m.GetLabel() {
		if v, ok := want[l.GetName()]; ok {
			if v != l.GetValue() {
				return false
			}
			n++
		}
	}
	return n == len(want)
}

// counterSum sums the counters (or gauges) of family name matching want.
func counterSum(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	var s float64
	f := fams[name]
	if f == nil {
		return 0
	}
	for _, m := range f.GetMetric() {
		if labelsMatch(m, want) {
			s += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return s
}

// histogram returns the merged cumulative buckets (upper bound -> count)
// and the count of the histograms of family name matching want.
func histogram(fams map[string]*dto.MetricFamily, name string, want map[string]string) (map[float64]uint64, uint64) {
	buckets := map[float64]uint64{}
	var count uint64
	f := fams[name]
	if f == nil {
		return buckets, 0
	}
	for _, m := range f.GetMetric() {
		if !labelsMatch(m, want) {
			continue
		}
		h := m.GetHistogram()
		count += h.GetSampleCount()
		for _, b := range h.GetBucket() {
			buckets[b.GetUpperBound()] += b.GetCumulativeCount()
		}
	}
	return buckets, count
}

// quantileBound is the smallest bucket bound holding at least q of the
// observations (+Inf when none does).
func quantileBound(buckets map[float64]uint64, count uint64, q float64) float64 {
	bounds := make([]float64, 0, len(buckets))
	for b := range buckets {
		bounds = append(bounds, b)
	}
	slices.Sort(bounds)
	for _, b := range bounds {
		if float64(buckets[b]) >= q*float64(count) {
			return b
		}
	}
	return math.Inf(1)
}

// p99 of durations.
func p99(d []time.Duration) time.Duration { return quantile(d, 0.99) }

// quantile q of durations (nearest rank).
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[max(0, min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1))]
}

func eventually(t *testing.T, timeout time.Duration, what string, f func() error) {
	t.Helper()
	testwait.For(t, timeout, 100*time.Millisecond, what, f)
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
