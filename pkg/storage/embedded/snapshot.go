package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/snapshot"
	etcdutl "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap/zapcore"
)

// RestoreRevisionBump is how far [RestoreSnapshot] moves the restored
// revision forward, with every older revision marked compacted: clients
// that saw a later resourceVersion before the restore (informers, the
// watch cache of another server) get 410 Gone and relist instead of
// waiting for a revision that now means something else. The amount is
// what the etcd operations guide recommends for Kubernetes
// (https://etcd.io/docs/v3.6/op-guide/recovery/, "--bump-revision
// 1000000000 --mark-compacted").
const RestoreRevisionBump = 1_000_000_000

// SaveSnapshot writes a snapshot of the etcd behind cfg (one endpoint) to
// path, through a temporary file renamed at the end, and returns etcd's
// storage version.
func SaveSnapshot(ctx context.Context, cfg clientv3.Config, path string, logger *slog.Logger) (string, error) {
	if len(cfg.Endpoints) != 1 {
		return "", fmt.Errorf("snapshot: exactly one etcd endpoint needed, got %v", cfg.Endpoints)
	}
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.Logger == nil {
		cfg.Logger = NewZapLogger(logger, zapcore.WarnLevel)
	}
	v, err := snapshot.SaveWithVersion(ctx, NewZapLogger(logger, zapcore.WarnLevel), cfg, path)
	if err != nil {
		return "", fmt.Errorf("snapshot of %s: %w", cfg.Endpoints[0], err)
	}
	return v, nil
}

// SaveDataDirSnapshot writes a snapshot of the embedded etcd in dataDir
// (kapi's <data-dir>/etcd) to path: through the running server's client
// socket when a kapi serves on it, else by starting the server on dataDir
// for the time of the snapshot.
func SaveDataDirSnapshot(ctx context.Context, dataDir, path string, logger *slog.Logger) (string, error) {
	if logger == nil {
		logger = slog.Default()
	}
	sock := filepath.Join(dataDir, socketDirName, socketName)
	if conn, err := net.DialTimeout("unix", sock, time.Second); err == nil {
		_ = conn.Close()
		return SaveSnapshot(ctx, clientv3.Config{Endpoints: []string{"unix://" + sock}, DialTimeout: 5 * time.Second}, path, logger)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "member")); err != nil {
		return "", fmt.Errorf("snapshot: no etcd data in %s: %w", dataDir, err)
	}
	srv, err := Start(ctx, Config{DataDir: dataDir, Logger: logger})
	if err != nil {
		return "", fmt.Errorf("snapshot: %w (is a kapi using it with its socket elsewhere?)", err)
	}
	defer srv.Close()
	return SaveSnapshot(ctx, clientv3.Config{Endpoints: srv.Endpoints(), DialTimeout: 5 * time.Second}, path, logger)
}

// RestoreSnapshot creates the embedded etcd's data in dataDir (kapi's
// <data-dir>/etcd, which must not exist or be empty) from the snapshot
// file, as the single member the embedded server runs, with the revision
// moved forward by [RestoreRevisionBump].
func RestoreSnapshot(snapshotPath, dataDir string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.Default()
	}
	if _, err := os.Stat(snapshotPath); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if entries, err := os.ReadDir(dataDir); err == nil && len(entries) > 0 {
		return fmt.Errorf("restore: %s is not empty: restore into a new data dir", dataDir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("restore: %w", err)
	}
	// The member the embedded server is (see etcdConfig): etcd's default
	// name, the placeholder peer URL, etcd's default cluster token.
	ec := embed.NewConfig()
	peer := noPeerURL.String()
	err := etcdutl.NewV3(NewZapLogger(logger, zapcore.WarnLevel)).Restore(etcdutl.RestoreConfig{
		SnapshotPath:        snapshotPath,
		Name:                ec.Name,
		OutputDataDir:       dataDir,
		PeerURLs:            []string{peer},
		InitialCluster:      ec.Name + "=" + peer,
		InitialClusterToken: ec.InitialClusterToken,
		RevisionBump:        RestoreRevisionBump,
		MarkCompacted:       true,
	})
	if err != nil {
		return fmt.Errorf("restore %s into %s: %w", snapshotPath, dataDir, err)
	}
	return os.Chmod(dataDir, 0o700)
}
