package app_test

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/app"
)

// runSnapshotCommand runs `kapi etcd snapshot ARGS...`.
func runSnapshotCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := app.NewCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"etcd", "snapshot"}, args...))
	err := cmd.Execute()
	return out.String(), err
}

// TestEtcdSnapshotRestoreServes: `snapshot save` of a running kapi's
// embedded etcd, then `snapshot restore` into a new data dir: a kapi
// started there serves the objects of the snapshot (and not those written
// after it), at resourceVersions past the bump (issue 20 point 2).
func TestEtcdSnapshotRestoreServes(t *testing.T) {
	embeddedEtcd := func(o *app.Options) { o.Storage.Backend = "etcd3" }
	r := startKapi(t, nil, embeddedEtcd)
	c := r.client(false)
	if code, body, err := createConfigMap(c, r.base, "saved", ""); err != nil || code != http.StatusCreated {
		t.Fatalf("create: %d %s %v", code, body, err)
	}
	file := filepath.Join(t.TempDir(), "kapi.db")
	out, err := runSnapshotCommand(t, "save", file, "--data-dir="+r.opts.DataDir)
	if err != nil || !strings.Contains(out, "Snapshot saved at "+file) {
		t.Fatalf("snapshot save: %v: %s", err, out)
	}
	if code, body, err := createConfigMap(c, r.base, "after-snapshot", ""); err != nil || code != http.StatusCreated {
		t.Fatalf("create: %d %s %v", code, body, err)
	}
	r.shutdown()
	_ = r.runErr()

	restored := t.TempDir()
	if out, err := runSnapshotCommand(t, "restore", file, "--data-dir="+restored); err != nil {
		t.Fatalf("snapshot restore: %v: %s", err, out)
	}
	if out, err := runSnapshotCommand(t, "restore", file, "--data-dir="+restored); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("restore over a restored data dir: %v %s, want a not-empty error", err, out)
	}
	r2 := startKapi(t, nil, embeddedEtcd, func(o *app.Options) { o.DataDir = restored })
	c2 := r2.client(false)
	res := do(c2, http.MethodGet, r2.base+"/api/v1/namespaces/default/configmaps/saved")
	if res.code != http.StatusOK {
		t.Fatalf("get the restored configmap: %d %s", res.code, res.body)
	}
	if res := do(c2, http.MethodGet, r2.base+"/api/v1/namespaces/default/configmaps/after-snapshot"); res.code != http.StatusNotFound {
		t.Errorf("configmap written after the snapshot: %d %s, want 404", res.code, res.body)
	}
	// --data-dir naming an etcd data dir (as `kapi etcd --data-dir`) is
	// read directly.
	file2 := filepath.Join(t.TempDir(), "etcd-dir.db")
	if out, err := runSnapshotCommand(t, "save", file2, "--data-dir="+filepath.Join(restored, "etcd")); err != nil {
		t.Errorf("snapshot save of an etcd data dir: %v: %s", err, out)
	}
	// A write after the restore is at a resourceVersion past the bump.
	code, rv, msg := createIn(c2, r2.base, "default", "after-restore", "")
	if code != http.StatusCreated || rv < 1_000_000_000 {
		t.Errorf("create after restore: %d %s at resourceVersion %d, want 201 past 1000000000", code, msg, rv)
	}
}

// TestEtcdSnapshotFlags: bad arguments are refused with a clear error.
func TestEtcdSnapshotFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"save"}, "accepts 1 arg"},
		{[]string{"save", "f", "--etcd-servers=http://127.0.0.1:1,http://127.0.0.1:2"}, "one member"},
		{[]string{"save", "f", "--data-dir="}, "--data-dir or --etcd-servers is required"},
		{[]string{"restore", "f", "--data-dir=" + t.TempDir()}, "restore"},
		{[]string{"restore", "f", "--etcd-servers=http://127.0.0.1:1"}, "unknown flag"},
	} {
		if out, err := runSnapshotCommand(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v %s, want an error with %q", tc.args, err, out, tc.want)
		}
	}
}
