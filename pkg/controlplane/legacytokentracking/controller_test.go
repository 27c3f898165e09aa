package legacytokentracking_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/controlplane/legacytokentracking"
)

func eventually(t *testing.T, what string, cond func() error) {
	t.Helper()
	testwait.For(t, 10*time.Second, 5*time.Millisecond, what, cond)
}

// TestController: against a real server (whose own controller made the
// ConfigMap at start and may not make it again for 30 minutes), a
// controller makes a deleted ConfigMap again with today's date (UTC), at
// most once per CreateInterval, and puts today's date in place of a
// "since" that does not parse, as upstream's (k8s.io/kubernetes
// pkg/controlplane/controller/legacytokentracking, v1.37.2).
func TestController(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	cms := cs.CoreV1().ConfigMaps(metav1.NamespaceSystem)
	get := func() (*corev1.ConfigMap, error) {
		return cms.Get(ctx, legacytokentracking.ConfigMapName, metav1.GetOptions{})
	}
	today := func() string { return time.Now().UTC().Format("2006-01-02") }
	eventually(t, "the server's configmap", func() error { _, err := get(); return err })

	const interval = 300 * time.Millisecond
	ctrl := &legacytokentracking.Controller{Client: cs, CreateInterval: interval}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctrl.Run(runCtx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})

	// The first deletion comes before the creation the limiter counts
	// from, so the creation after the second deletion comes at least the
	// interval after it. (The time the test sees a creation lags it by
	// up to its polling under load: measuring from there made the test
	// flaky.)
	deleted := time.Now()
	if err := cms.Delete(ctx, legacytokentracking.ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted configmap is made again", func() error {
		cm, err := get()
		if err != nil {
			return err
		}
		if cm.Data["since"] != today() || len(cm.Data) != 1 {
			return fmt.Errorf("data %v", cm.Data)
		}
		return nil
	})

	// Deleted again within the interval: made again only after it.
	if err := cms.Delete(ctx, legacytokentracking.ConfigMapName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the configmap is made again after the interval", func() error {
		_, err := get()
		if apierrors.IsNotFound(err) {
			return err
		}
		if err != nil {
			t.Fatal(err)
		}
		return nil
	})
	if since := time.Since(deleted); since < interval {
		t.Errorf("made again %v after the first deletion, want at least the interval %v", since, interval)
	}

	// A date that does not parse, or none: today's.
	for _, data := range []map[string]string{{"since": "yesterday", "other": "kept"}, nil} {
		cm, err := get()
		if err != nil {
			t.Fatal(err)
		}
		cm.Data = data
		if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, fmt.Sprintf("data %v repaired", data), func() error {
			cm, err := get()
			if err != nil {
				return err
			}
			if cm.Data["since"] != today() || (data != nil && cm.Data["other"] != "kept") {
				return fmt.Errorf("data %v", cm.Data)
			}
			return nil
		})
	}

	// A date that parses is left alone.
	cm, err := get()
	if err != nil {
		t.Fatal(err)
	}
	cm.Data = map[string]string{"since": "2020-02-02"}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if cm, err := get(); err != nil || cm.Data["since"] != "2020-02-02" {
		t.Errorf("a parsable date: got %v %v, want it kept", cm, err)
	}
}
