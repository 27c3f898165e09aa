package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestFieldValidationSeries sends what was sent to kube-apiserver v1.37.2
// in session 23 — creates with fieldValidation=Strict and =bogus (201,
// 422), a list whose label selector mentions fieldValidation,
// /healthz?fieldValidation=Warn and /version?fieldValidation=Ignore — and
// checks field_validation_request_duration_seconds as the reference
// showed it: one series for each of "", Strict, Warn (the health check is
// instrumented) and invalid (the bogus value, and the selector), none for
// Ignore (/version is not instrumented), and every one empty: upstream
// resolves the series of each request but never observes it.
func TestFieldValidationSeries(t *testing.T) {
	srv := kapitest.Start(t)
	ctx := context.Background()
	rc := kubernetes.NewForConfigOrDie(srv.Config).CoreV1().RESTClient()
	for _, c := range []struct {
		post  bool
		path  string
		param string
		code  int
	}{
		{true, "/api/v1/namespaces/default/configmaps", "Strict", 201},
		{true, "/api/v1/namespaces/default/configmaps", "bogus", 422},
		{false, "/api/v1/namespaces/default/configmaps", "", 200},
		{false, "/healthz", "Warn", 200},
		{false, "/version", "Ignore", 200},
	} {
		req := rc.Get()
		if c.post {
			req = rc.Post().Body([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fv-`+strings.ToLower(c.param)+`"}}`)).SetHeader("Content-Type", "application/json")
		}
		req = req.AbsPath(c.path)
		if c.param != "" {
			req = req.Param("fieldValidation", c.param)
		} else {
			req = req.Param("labelSelector", "fieldValidation")
		}
		var code int
		req.Do(ctx).StatusCode(&code)
		if code != c.code {
			t.Errorf("%s %s fieldValidation=%s: got %d, want %d", map[bool]string{true: "POST", false: "GET"}[c.post], c.path, c.param, code, c.code)
		}
	}
	got := scrape(t, srv.Config)
	mf, ok := got["field_validation_request_duration_seconds"]
	if !ok {
		t.Fatal("field_validation_request_duration_seconds: missing")
	}
	for _, want := range loadFamilies(t) {
		if want.Name == mf.GetName() {
			checkFamily(t, mf, want)
		}
	}
	var values []string
	for _, m := range mf.GetMetric() {
		values = append(values, m.GetLabel()[0].GetValue())
		if n := m.GetHistogram().GetSampleCount(); n != 0 {
			t.Errorf("field_validation=%q: %d observations, want 0 (upstream never observes)", m.GetLabel()[0].GetValue(), n)
		}
	}
	slices.Sort(values)
	if want := []string{"", "Strict", "Warn", "invalid"}; !slices.Equal(values, want) {
		t.Errorf("field_validation values: got %q, want %q", values, want)
	}
}
