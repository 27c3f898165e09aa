package app_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/etcd3"
	"github.com/kapi-dev/kapi/pkg/storage/storagetest"
)

// configMapStore is the store the REST layer will put configmaps in: etcd3
// on the chain's own etcd client.
func configMapStore(cfg *app.Config) *etcd3.Store {
	return etcd3.New(cfg.StorageClient(), etcd3.Config{
		Codec:       storagetest.Codec(),
		NewFunc:     func() runtime.Object { return &corev1.ConfigMap{} },
		NewListFunc: func() runtime.Object { return &corev1.ConfigMapList{} },
	})
}

// durabilityChild runs in the child process: a whole kapi on the embedded
// default serves while a writer stores configmaps through the chain's
// storage and prints each acknowledged write, until it is killed.
func durabilityChild(dataDir string) {
	o := app.NewOptions()
	o.DataDir = dataDir
	o.SecureServing.BindPort = 0
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	completed, err := o.Complete()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cfg, err := app.NewConfig(completed)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	head, err := app.CreateServerChain(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go func() { _ = head.PrepareRun().Run(context.Background()) }()
	store := configMapStore(cfg)
	for i := 0; ; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "default"}, Data: map[string]string{"i": strconv.Itoa(i)}}
		out := &corev1.ConfigMap{}
		if err := store.Create(context.Background(), "/configmaps/default/"+cm.Name, cm, out); err != nil {
			fmt.Fprintln(os.Stderr, "create:", err)
			os.Exit(3)
		}
		fmt.Printf("ack %s %s\n", cm.Name, out.ResourceVersion)
	}
}

func TestKillNineLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kapi twice on embedded etcd")
	}
	dataDir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KAPI_TEST_DURABILITY_DIR="+dataDir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]uint64{}
	var lastRV uint64
	sc := bufio.NewScanner(stdout)
	deadline := time.Now().Add(60 * time.Second)
	for len(acked) < 300 && sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "ack" {
			continue
		}
		rv, _ := strconv.ParseUint(f[2], 10, 64)
		acked[f[1]] = rv
		lastRV = max(lastRV, rv)
		if time.Now().After(deadline) {
			break
		}
	}
	// Kill mid-stream: the child is still writing.
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(acked) < 300 {
		t.Fatalf("only %d writes acknowledged before the deadline; child stderr:\n%s", len(acked), stderr.String())
	}

	// Restart kapi on the same data dir, in-process, and read back.
	o := app.NewOptions()
	o.DataDir = dataDir
	o.SecureServing.BindPort = 0
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	completed, err := o.Complete()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := app.NewConfig(completed)
	if err != nil {
		t.Fatal(err)
	}
	head, err := app.CreateServerChain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer head.Destroy()
	store := configMapStore(cfg)
	ctx := context.Background()
	for name, rv := range acked {
		got := &corev1.ConfigMap{}
		if err := store.Get(ctx, "/configmaps/default/"+name, storage.GetOptions{}, got); err != nil {
			t.Fatalf("acknowledged %s (rv %d) lost after kill -9: %v", name, rv, err)
		}
		if got.ResourceVersion != strconv.FormatUint(rv, 10) {
			t.Fatalf("%s: got rv %s, want %d", name, got.ResourceVersion, rv)
		}
	}
	// The revision continues after the restart.
	out := &corev1.ConfigMap{}
	if err := store.Create(ctx, "/configmaps/default/after-restart", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-restart", Namespace: "default"}}, out); err != nil {
		t.Fatal(err)
	}
	if rv, _ := strconv.ParseUint(out.ResourceVersion, 10, 64); rv <= lastRV {
		t.Fatalf("revision went back: %d after %d", rv, lastRV)
	}
}
