package aggregator

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/pkg/aggregator/remote"
)

// The remote-discovery controller resolves backends through Target.
var _ remote.Targets = (*Aggregator)(nil)

func TestTarget(t *testing.T) {
	ts, p, _, b := setupWardle(t)
	svc := remoteAPIService(group, version, "wardle", "api", p.servingCA.pem)
	u, rt, err := ts.agg.Target(context.Background(), svc)
	if err != nil {
		t.Fatal(err)
	}
	if u.String() != "https://"+b.addr {
		t.Errorf("got base URL %s, want https://%s", u, b.addr)
	}
	// The transport trusts the caBundle and presents the front-proxy
	// certificate; it adds no identity.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u.String()+"/apis/"+group+"/"+version+"/echo", nil)
	resp, err := (&http.Client{Transport: rt}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("got %d %s", resp.StatusCode, body)
	}
	seen := doJSON(t, &http.Client{Transport: rt}, mustRequest(t, "GET", u.String()+"/x"))
	if seen.ClientCN != "front-proxy-client" || seen.Header.Get("X-Remote-User") != "" {
		t.Errorf("got CN %q X-Remote-User %q, want front-proxy-client and none", seen.ClientCN, seen.Header.Get("X-Remote-User"))
	}

	// Errors: a local APIService, a service without endpoints.
	local := remoteAPIService(group, "v9", "", "", nil)
	local.Spec.Service = nil
	if _, _, err := ts.agg.Target(context.Background(), local); err == nil {
		t.Error("local: got a target, want an error")
	}
	ts.svcs.setEndpoint("wardle", "api", "")
	if _, _, err := ts.agg.Target(context.Background(), svc); err == nil {
		t.Error("no endpoints: got a target, want an error")
	}
	if len(ts.agg.Resources()) == 0 {
		t.Error("Resources: got none")
	}
}
