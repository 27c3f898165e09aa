package manager_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/controlplane/controllers/manager"
)

// With StartDeferred, Ready waits only for the controllers that gate it,
// and the others (the garbage collector among them) start once it is
// closed: a dependent whose owner is deleted stays until then and is
// collected after. The server's own collector is off, so that only this
// manager's can collect.
func TestStartDeferred(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithFlags("--controllers=*,-garbage-collector-controller"))
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	logs := &lines{}
	deferred := make(chan struct{})
	m, err := manager.New(manager.Config{
		Client:        srv.Config,
		RootCA:        []byte("ca"),
		Logger:        slog.New(slog.NewTextHandler(logs, nil)),
		StartDeferred: deferred,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-m.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("not ready with the deferred controllers held back")
	}
	if got, want := logs.started(), []string{"2"}; !equal(got, want) {
		t.Fatalf("controllers started before StartDeferred is closed: counts %v, want %v (the service-account and root CA controllers)", got, want)
	}

	owner, err := cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:            "dependent",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "owner", UID: owner.UID}},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Secrets("default").Delete(ctx, "owner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "dependent", metav1.GetOptions{}); err != nil {
		t.Fatalf("the dependent is gone before the collector may start: %v", err)
	}

	close(deferred)
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "dependent", metav1.GetOptions{})
		if err != nil && strings.Contains(err.Error(), "not found") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dependent was not collected after StartDeferred was closed (last get: %v); started: %v", err, logs.started())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := logs.started(); len(got) != 2 || got[0] != "2" {
		t.Fatalf("controllers started: counts %v, want the 2 gating ones, then the others", got)
	}
}

// lines collects log lines.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, string(p))
	return len(p), nil
}

// started returns the count of each "started controllers" line, in order.
func (l *lines) started() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.all {
		if !strings.Contains(line, `msg="started controllers"`) {
			continue
		}
		var n int
		if i := strings.Index(line, "count="); i >= 0 {
			_, _ = fmt.Sscanf(line[i:], "count=%d", &n)
		}
		out = append(out, fmt.Sprint(n))
	}
	return out
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }
