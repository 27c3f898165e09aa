package kapitest_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kapi-dev/kapi/kapitest"
)

// Options and flags are set through kapitest's own types (this package is
// outside kapitest, as a user's test is): fields first, then Flags, which
// the command's flag set parses and which win.
func TestOptionsAndFlags(t *testing.T) {
	srv := kapitest.Start(t,
		kapitest.WithOptions(func(o *kapitest.Options) {
			o.HSTSDirectives = []string{"max-age=1"}
		}),
		kapitest.WithFlags(`--cors-allowed-origins=^https://ui\.example\.com$`, "--strict-transport-security-directives=max-age=31536000"),
	)
	if srv.Options.StorageBackend != "memory" || len(srv.Options.Flags) != 2 {
		t.Errorf("got options %+v, want the memory backend and two flags", srv.Options)
	}
	client, err := rest.HTTPClientFor(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.Config.Host+"/api/v1/namespaces", nil)
	req.Header.Set("Origin", "https://ui.example.com")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "https://ui.example.com" {
		t.Errorf("got Access-Control-Allow-Origin %q, want the origin (--cors-allowed-origins)", got)
	}
	if got := res.Header.Get("Strict-Transport-Security"); got != "max-age=31536000" {
		t.Errorf("got Strict-Transport-Security %q, want the flag's max-age=31536000", got)
	}
	// Stop is idempotent: the cleanup stops it again.
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

func TestBadFlag(t *testing.T) {
	_, err := kapitest.StartE(t.TempDir(), slog.New(slog.DiscardHandler), kapitest.WithFlags("--no-such-flag=1"))
	if err == nil || !strings.Contains(err.Error(), "unknown flag: --no-such-flag") {
		t.Fatalf("got %v, want unknown flag: --no-such-flag", err)
	}
}
