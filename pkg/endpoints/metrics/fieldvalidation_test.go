package metrics

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

func TestFieldValidationLabel(t *testing.T) {
	for query, want := range map[string]string{
		"":                                "",
		"dryRun=All":                      "",
		"fieldValidation=Strict":          "Strict",
		"fieldValidation=Warn&dryRun=All": "Warn",
		"fieldValidation=Ignore":          "Ignore",
		"fieldValidation=":                "",
		"fieldValidation=strict":          "invalid",
		"fieldValidation=Strict&fieldValidation=Warn": "invalid",
		"fieldValidation":               "",
		"labelSelector=fieldValidation": "invalid", // upstream's: mentioned, but no parameter
		"fieldValidationX=Strict":       "invalid",
		"fieldValidation=Str%69ct":      "Strict",
	} {
		u := &url.URL{Path: "/api/v1/namespaces/a/configmaps", RawQuery: query}
		if got := fieldValidationValues[fieldValidationIndex(u)]; got != want {
			t.Errorf("%q: got %q, want %q", query, got, want)
		}
	}
}

// Every recorded request makes its value's series exist; none is observed
// (upstream's never are). Requests that are not recorded add nothing.
func TestFieldValidationSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	res := request.NewResolver()
	for _, target := range []string{
		"/api/v1/namespaces/a/configmaps",
		"/api/v1/namespaces/a/configmaps?fieldValidation=Strict",
		"/api/v1/namespaces/a/configmaps?fieldValidation=Strict",
		"/api/v1/namespaces/a/configmaps?fieldValidation=bogus",
		"/version?fieldValidation=Warn", // not recorded
	} {
		r := httptest.NewRequest("POST", target, nil)
		info, err := res.Resolve(r)
		if err != nil {
			t.Fatal(err)
		}
		m.RecordRequest(r, info, 201, 0, 0)
	}
	want := []string{`field_validation="" 0`, `field_validation="Strict" 0`, `field_validation="invalid" 0`}
	if got := gather(t, reg, "field_validation_request_duration_seconds"); strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("got %q, want %q", got, want)
	}
}
