package serviceaccount

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	applycorev1 "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

// patchCall is one PatchSecret call.
type patchCall struct {
	ns, name string
	patch    string
}

// recordingSecrets records the patches it is asked for.
type recordingSecrets struct {
	mu    sync.Mutex
	calls []patchCall
}

func (r *recordingSecrets) PatchSecret(_ context.Context, ns, name string, patch []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, patchCall{ns, name, string(patch)})
	return nil
}

func (r *recordingSecrets) take() []patchCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// recordingBackend keeps the audit events it is given.
type recordingBackend struct{ events []*audit.Event }

func (b *recordingBackend) ProcessEvents(evs ...*audit.Event) bool {
	b.events = append(b.events, evs...)
	return true
}
func (b *recordingBackend) Run(<-chan struct{}) error { return nil }
func (b *recordingBackend) Shutdown()                 {}

// recordingWarnings keeps the warnings of a request.
type recordingWarnings struct{ got []string }

func (w *recordingWarnings) AddWarning(_, text string) { w.got = append(w.got, text) }

// TestLegacyTokenTracking: a legacy token's use is tracked as upstream's
// legacy validator and JWT authenticator track it (k8s.io/kubernetes
// pkg/serviceaccount/legacy.go and jwt.go, v1.37.2): the audit
// annotations of a token without audiences and of its Secret's kind, the
// warning for a Secret the service account lists (auto-generated), the
// last-used label merge-patched unless today's or tomorrow's, the
// rejection of a Secret labelled invalid (still labelled as used, counted,
// without annotations), and the counters.
func TestLegacyTokenTracking(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer := mustSigner(t, key)
	now := time.Date(2026, 11, 28, 23, 30, 0, 0, time.UTC)
	issuer := &Issuer{signer: signer, issuer: "https://iss", now: func() time.Time { return now }}
	sa := &corev1.ServiceAccount{ObjectMeta: meta("ns", "sa", "sa-uid"), Secrets: []corev1.ObjectReference{{Name: "auto"}}}
	objs := &objects{sas: map[string]*corev1.ServiceAccount{"ns/sa": sa}, secrets: map[string]*corev1.Secret{}}
	tokens := map[string]string{}
	for _, name := range []string{"auto", "manual"} {
		s := &corev1.Secret{ObjectMeta: meta("ns", name, name+"-uid"), Data: map[string][]byte{}}
		tok, err := issuer.IssueLegacy(sa, s)
		if err != nil {
			t.Fatal(err)
		}
		s.Data[corev1.ServiceAccountTokenKey] = []byte(tok)
		objs.secrets["ns/"+name] = s
		tokens[name] = tok
	}
	a := NewAuthenticator([]string{"https://iss"}, true, []crypto.PublicKey{signer.Public()}, []string{"api"}, objs)
	a.now = func() time.Time { return now }
	secrets := &recordingSecrets{}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	a.TrackLegacyTokens(secrets, m, nil)

	// The patch upstream sends: the JSON of its apply configuration.
	upstreamPatch := func(name, uid, day string) string {
		b, err := json.Marshal(applycorev1.Secret(name, "ns").WithUID(types.UID(uid)).WithLabels(map[string]string{LastUsedLabelKey: day}))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	authenticate := func(token string) (annotations map[string]string, warnings []string, err error) {
		t.Helper()
		ctx := audit.WithContext(context.Background())
		b := &recordingBackend{}
		audit.FromContext(ctx).Begin(&audit.Event{}, audit.Policy{Level: audit.LevelMetadata}, b, nil)
		w := &recordingWarnings{}
		ctx = warning.WithRecorder(ctx, w)
		_, _, _, err = a.AuthenticateToken(ctx, token)
		audit.FromContext(ctx).Emit(audit.StageResponseComplete)
		if len(b.events) != 1 {
			t.Fatalf("audit events: got %d, want 1", len(b.events))
		}
		return b.events[0].Annotations, w.got, err
	}
	counters := func() map[string]float64 {
		return map[string]float64{
			"legacy": counterValue(t, m.legacy), "manual": counterValue(t, m.manualUses),
			"auto": counterValue(t, m.autoUses), "invalid": counterValue(t, m.invalidAutoUses),
		}
	}
	const today, tomorrow = "2026-11-28", "2026-11-29"

	t.Run("manual secret", func(t *testing.T) {
		ann, warns, err := authenticate(tokens["manual"])
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{
			LegacyTokenAnnotation:             "system:serviceaccount:ns:sa",
			LegacyTokenManualSecretAnnotation: "manual",
		}
		if !equalMaps(ann, want) || len(warns) != 0 {
			t.Errorf("got annotations %v warnings %q, want %v and none", ann, warns, want)
		}
		calls := secrets.take()
		if len(calls) != 1 || calls[0] != (patchCall{"ns", "manual", upstreamPatch("manual", "manual-uid", today)}) {
			t.Errorf("patches: got %+v, want one of ns/manual with %s", calls, upstreamPatch("manual", "manual-uid", today))
		}
	})
	t.Run("auto-generated secret", func(t *testing.T) {
		ann, warns, err := authenticate(tokens["auto"])
		if err != nil {
			t.Fatal(err)
		}
		if ann[LegacyTokenAutogeneratedAnnotation] != "auto" || ann[LegacyTokenManualSecretAnnotation] != "" {
			t.Errorf("annotations: got %v", ann)
		}
		if len(warns) != 1 || warns[0] != "Use tokens from the TokenRequest API or manually created secret-based tokens instead of auto-generated secret-based tokens." {
			t.Errorf("warnings: got %q", warns)
		}
		if calls := secrets.take(); len(calls) != 1 || calls[0].name != "auto" {
			t.Errorf("patches: got %+v", calls)
		}
	})
	t.Run("labelled today or tomorrow: no patch", func(t *testing.T) {
		for _, day := range []string{today, tomorrow} {
			objs.secrets["ns/manual"].Labels = map[string]string{LastUsedLabelKey: day}
			if _, _, err := authenticate(tokens["manual"]); err != nil {
				t.Fatal(err)
			}
			if calls := secrets.take(); len(calls) != 0 {
				t.Errorf("labelled %s: got patches %+v, want none", day, calls)
			}
		}
		objs.secrets["ns/manual"].Labels = map[string]string{LastUsedLabelKey: "2026-11-27"}
		if _, _, err := authenticate(tokens["manual"]); err != nil {
			t.Fatal(err)
		}
		if calls := secrets.take(); len(calls) != 1 {
			t.Errorf("labelled yesterday: got patches %+v, want one", calls)
		}
	})
	t.Run("invalid since", func(t *testing.T) {
		objs.secrets["ns/auto"].Labels = map[string]string{InvalidSinceLabelKey: "2026-01-01"}
		ann, warns, err := authenticate(tokens["auto"])
		want := "the token in secret ns/auto for service account ns/sa has been marked invalid. Use tokens from the TokenRequest API " +
			"or manually created secret-based tokens, or remove the 'kubernetes.io/legacy-token-invalid-since' label from the secret " +
			"to temporarily allow use of this token"
		if err == nil || err.Error() != want {
			t.Fatalf("got %v, want %q", err, want)
		}
		// The annotations (legacy-token, and legacy-token-invalidated
		// "auto/ns") are dropped with the failed authentication, as
		// upstream's token cache drops them: kube-apiserver v1.37.2's
		// audit event of such a 401 has none.
		if len(ann) != 0 || len(warns) != 0 {
			t.Errorf("got annotations %v warnings %q, want none", ann, warns)
		}
		if calls := secrets.take(); len(calls) != 1 || calls[0].patch != upstreamPatch("auto", "auto-uid", today) {
			t.Errorf("patches: got %+v, want the last-used label", calls)
		}
	})
	// manual: 4 uses (the first, the two labelled today or tomorrow,
	// the one labelled yesterday), auto: 1, invalid: 1; each of the six
	// is a legacy token.
	if got, want := counters(), map[string]float64{"legacy": 6, "manual": 4, "auto": 1, "invalid": 1}; !equalMaps(got, want) {
		t.Errorf("counters: got %v, want %v", got, want)
	}
	// As upstream's /metrics: every family present from the start, help
	// with the stability level.
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	help := map[string]string{}
	for _, f := range families {
		help[f.GetName()] = f.GetHelp()
	}
	wantHelp := map[string]string{
		"serviceaccount_legacy_tokens_total":                  "[BETA] Cumulative legacy service account tokens used",
		"serviceaccount_stale_tokens_total":                   "[BETA] Cumulative stale projected service account tokens used",
		"serviceaccount_valid_tokens_total":                   "[BETA] Cumulative valid projected service account tokens used",
		"serviceaccount_legacy_manual_token_uses_total":       "[ALPHA] Cumulative manually created legacy tokens used",
		"serviceaccount_legacy_auto_token_uses_total":         "[ALPHA] Cumulative auto-generated legacy tokens used",
		"serviceaccount_invalid_legacy_auto_token_uses_total": "[ALPHA] Cumulative invalid auto-generated legacy tokens used",
	}
	if !equalMaps(help, wantHelp) {
		t.Errorf("families: got %v, want %v", help, wantHelp)
	}
}

// TestBoundTokenWarnAfter: a bound token with warnafter counts as valid
// before it and as stale after it, with upstream's audit annotation
// (pkg/serviceaccount/claims.go, v1.37.2); one without counts as neither.
func TestBoundTokenWarnAfter(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer := mustSigner(t, key)
	now := time.Unix(1_800_000_000, 0)
	issuer := &Issuer{signer: signer, issuer: "https://iss", now: func() time.Time { return now }}
	sa := &corev1.ServiceAccount{ObjectMeta: meta("ns", "sa", "sa-uid")}
	a := NewAuthenticator([]string{"https://iss"}, true, []crypto.PublicKey{signer.Public()}, []string{"api"},
		&objects{sas: map[string]*corev1.ServiceAccount{"ns/sa": sa}})
	m, err := NewMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	a.TrackLegacyTokens(nil, m, nil)
	warned, _, err := issuer.Issue(BoundToken{ServiceAccount: sa, Audiences: []string{"api"}, Expiration: 2 * time.Hour, WarnAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := issuer.Issue(BoundToken{ServiceAccount: sa, Audiences: []string{"api"}, Expiration: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	use := func(token string, at time.Duration) map[string]string {
		t.Helper()
		a.now = func() time.Time { return now.Add(at) }
		ctx := audit.WithContext(context.Background())
		b := &recordingBackend{}
		audit.FromContext(ctx).Begin(&audit.Event{}, audit.Policy{Level: audit.LevelMetadata}, b, nil)
		if _, _, ok, err := a.AuthenticateToken(ctx, token); !ok || err != nil {
			t.Fatalf("got %v %v", ok, err)
		}
		audit.FromContext(ctx).Emit(audit.StageResponseComplete)
		return b.events[0].Annotations
	}
	if ann := use(warned, 30*time.Minute); len(ann) != 0 {
		t.Errorf("before warnafter: annotations %v", ann)
	}
	if ann := use(plain, 90*time.Minute); len(ann) != 0 {
		t.Errorf("no warnafter: annotations %v", ann)
	}
	want := "subject: system:serviceaccount:ns:sa, seconds after warning threshold: 1800"
	if ann := use(warned, 90*time.Minute); ann[StaleTokenAnnotation] != want {
		t.Errorf("after warnafter: annotations %v, want %s=%q", ann, StaleTokenAnnotation, want)
	}
	if v, s, l := counterValue(t, m.valid), counterValue(t, m.stale), counterValue(t, m.legacy); v != 1 || s != 1 || l != 0 {
		t.Errorf("valid, stale, legacy: got %v %v %v, want 1 1 0", v, s, l)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func equalMaps[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
