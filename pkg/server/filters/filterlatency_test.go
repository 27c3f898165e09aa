package filters

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/endpoints/metrics"
)

// denyPods allows everything but pods.
type denyPods struct{}

func (denyPods) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Resource == "pods" {
		return authorizer.DecisionNoOpinion, "", nil
	}
	return authorizer.DecisionAllow, "", nil
}

// TestFilterLatencyMetrics: apiserver_request_filter_duration_seconds
// (k8s.io/apiserver v0.37 endpoints/metrics, ALPHA) observes each
// measured filter once per request it passes on, as upstream's
// filterlatency.TrackStarted/TrackCompleted around authentication,
// audit, (constrained) impersonation, priority and fairness and
// authorization: a request failing authentication is observed by
// authentication only (its failure handler completes it), a forbidden one
// by every filter but authorization; max-in-flight is not measured. The
// reference kube-apiserver v1.37.2 served the same five series, with the
// same count each, after allowed requests only (session 18).
func TestFilterLatencyMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	close(done)
	slow := 5 * time.Millisecond
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(slow) // not part of any filter's latency
		w.WriteHeader(http.StatusOK)
	})
	h := BuildChain(api, ChainConfig{
		Logger:                      discard(),
		MuxAndDiscoveryComplete:     done,
		RequestTimeout:              time.Minute,
		Authenticator:               tokenAuthenticator{"good": alice},
		AuditBackend:                audit.NewLogBackend(&syncBuffer{}, nil, discard()),
		AuditPolicy:                 audit.MetadataPolicy(),
		MaxRequestsInFlight:         400,
		MaxMutatingRequestsInFlight: 200,
		Authorizer:                  denyPods{},
		Metrics:                     m,
	})
	serve := func(path, token string, want int) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != want {
			t.Fatalf("GET %s: %d, want %d", path, w.Code, want)
		}
	}
	for range 3 {
		serve("/api/v1/namespaces/ns/configmaps/c", "good", http.StatusOK)
	}
	serve("/api/v1/namespaces/ns/configmaps/c", "bad", http.StatusUnauthorized)
	serve("/api/v1/namespaces/ns/pods/p", "good", http.StatusForbidden)
	serve("/api/v1/namespaces/ns/pods/p", "good", http.StatusForbidden)

	want := map[string]uint64{"authentication": 6, "audit": 5, "constrainedimpersonation": 5, "authorization": 3}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "apiserver_request_filter_duration_seconds" {
			continue
		}
		for _, s := range f.GetMetric() {
			if len(s.GetLabel()) != 1 || s.GetLabel()[0].GetName() != "filter" {
				t.Fatalf("labels %v, want filter only", s.GetLabel())
			}
			hist := s.GetHistogram()
			got[s.GetLabel()[0].GetValue()] = hist.GetSampleCount()
			if hist.GetSampleSum() >= slow.Seconds() {
				t.Errorf("filter %s: %vs in all, which holds the handler's %v", s.GetLabel()[0].GetValue(), hist.GetSampleSum(), slow)
			}
			if b := hist.GetBucket(); len(b) != 13 || b[0].GetUpperBound() != 0.0001 || b[12].GetUpperBound() != 30 {
				t.Errorf("buckets %v, want upstream's 0.0001 ... 30", b)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("series %v, want %v", got, want)
	}
	for f, n := range want {
		if got[f] != n {
			t.Errorf("filter %s: %d observations, want %d", f, got[f], n)
		}
	}
}
