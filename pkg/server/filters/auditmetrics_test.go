package filters

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// TestWithAuditRejectsUnstoredRequests checks upstream's rule: a request
// whose RequestReceived event the backend refuses (here: a log backend
// already shut down) is not served, is answered 500 and is counted in
// apiserver_audit_requests_rejected_total; the lost event is counted in
// apiserver_audit_error_total.
func TestWithAuditRejectsUnstoredRequests(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := audit.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	log := newAuditLog(t)
	log.SetMetrics(m)
	log.Shutdown()
	served := false
	h := WithAudit(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }),
		log, audit.Policy{Level: audit.LevelMetadata}, DefaultLongRunning, m)
	h = WithRequestInfo(h, request.NewResolver(), discard())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces", nil))
	if served || rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "failed to store audit event") {
		t.Errorf("got served=%v, %d %q; want not served, 500 failed to store audit event", served, rec.Code, rec.Body.String())
	}
	want := map[string]float64{
		"apiserver_audit_requests_rejected_total": 1,
		"apiserver_audit_error_total":             1,
		"apiserver_audit_event_total":             1,
		"apiserver_audit_level_total":             1,
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			if got := s.GetCounter().GetValue(); got != want[mf.GetName()] {
				t.Errorf("%s: got %g, want %g", mf.GetName(), got, want[mf.GetName()])
			}
			delete(want, mf.GetName())
		}
	}
	if len(want) > 0 {
		t.Errorf("families missing: %v", want)
	}
}
