package lazy

import (
	"reflect"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// restClienter is what every group client of kubernetes.Interface has.
type restClienter interface{ RESTClient() rest.Interface }

// TestMatchesClientset checks every group of kubernetes.Interface: the
// lazy client talks to the same path, with the same GroupVersion, user
// agent and rate limiter settings as kubernetes.NewForConfig's.
func TestMatchesClientset(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "t", QPS: 5, Burst: 10}
	want, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	iface := reflect.TypeFor[kubernetes.Interface]()
	wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
	var limiter any
	groups := 0
	for i := range iface.NumMethod() {
		m := iface.Method(i)
		if m.Name == "Discovery" {
			continue
		}
		w := wv.MethodByName(m.Name).Call(nil)[0].Interface().(restClienter).RESTClient()
		g := gv.MethodByName(m.Name).Call(nil)[0].Interface().(restClienter).RESTClient()
		if w.APIVersion() != g.APIVersion() {
			t.Errorf("%s: GroupVersion %v, want %v", m.Name, g.APIVersion(), w.APIVersion())
		}
		if wu, gu := w.Get().URL().String(), g.Get().URL().String(); wu != gu {
			t.Errorf("%s: URL %s, want %s", m.Name, gu, wu)
		}
		rc := g.(*rest.RESTClient)
		if rc.Client == nil || rc.Client.Transport == nil {
			t.Errorf("%s: no HTTP client", m.Name)
		}
		// As NewForConfig's, every group's client shares one rate limiter.
		if limiter == nil {
			limiter = g.GetRateLimiter()
		} else if g.GetRateLimiter() != limiter {
			t.Errorf("%s: a rate limiter of its own", m.Name)
		}
		if g.GetRateLimiter() == nil || g.GetRateLimiter().QPS() != 5 {
			t.Errorf("%s: rate limiter %v, want QPS 5", m.Name, g.GetRateLimiter())
		}
		// A second call returns the same client.
		if again := gv.MethodByName(m.Name).Call(nil)[0].Interface().(restClienter).RESTClient(); again != g {
			t.Errorf("%s: a new client on the second call", m.Name)
		}
		groups++
	}
	if groups < 50 {
		t.Fatalf("only %d groups", groups)
	}
	wd, gd := want.Discovery().RESTClient().Get().URL().String(), got.Discovery().RESTClient().Get().URL().String()
	if wd != gd {
		t.Errorf("discovery URL %s, want %s", gd, wd)
	}
	if got.Discovery() != got.Discovery() {
		t.Error("a new discovery client on the second call")
	}
	if (*Clientset)(nil).Discovery() != nil {
		t.Error("nil clientset: non-nil discovery")
	}
}

// TestConfigErrors checks that NewForConfig fails where
// kubernetes.NewForConfig does, at construction, not at a group's first use.
func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]*rest.Config{
		"bad host":       {Host: "http://a b/"},
		"missing CA":     {Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{CAFile: "/nonexistent/ca.crt"}},
		"QPS, no burst":  {Host: "https://127.0.0.1:6443", QPS: 5},
		"token and user": {Host: "https://127.0.0.1:6443", BearerToken: "t", Username: "u", Password: "p"},
		"fine":           {Host: "https://127.0.0.1:6443"},
	} {
		_, wantErr := kubernetes.NewForConfig(cfg)
		_, gotErr := NewForConfig(cfg)
		if (wantErr == nil) != (gotErr == nil) {
			t.Errorf("%s: error %v, kubernetes.NewForConfig's %v", name, gotErr, wantErr)
		}
		if name != "fine" && gotErr == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// BenchmarkNewForConfig compares making a clientset of a loopback-like
// config with kubernetes.NewForConfig and with NewForConfig, where the
// controllers then use a few groups (core/v1, coordination/v1, rbac/v1).
func BenchmarkNewForConfig(b *testing.B) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "t", QPS: -1}
	b.Run("kubernetes", func(b *testing.B) {
		for b.Loop() {
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				b.Fatal(err)
			}
			_, _, _ = cs.CoreV1(), cs.CoordinationV1(), cs.RbacV1()
		}
	})
	b.Run("lazy", func(b *testing.B) {
		for b.Loop() {
			cs, err := NewForConfig(cfg)
			if err != nil {
				b.Fatal(err)
			}
			_, _, _ = cs.CoreV1(), cs.CoordinationV1(), cs.RbacV1()
		}
	})
}
