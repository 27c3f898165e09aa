package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/pkg/server/options"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
)

// newEtcdSnapshotCommand returns `snapshot save|restore`, a subcommand of
// `kapi etcd` (issue 20): save copies the embedded etcd of --data-dir (or
// one --etcd-servers member) to a file; restore creates
// <data-dir>/etcd from such a file for a kapi started on that data dir.
func newEtcdSnapshotCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save or restore a snapshot of kapi's etcd",
		Args:  cobra.NoArgs,
	}
	save := options.NewEtcdSnapshotOptions()
	saveCmd := &cobra.Command{
		Use:   "save FILE",
		Short: "Write a snapshot of the embedded etcd of --data-dir (or of one --etcd-servers member) to FILE",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := errors.Join(save.Validate()...); err != nil {
				return err
			}
			logger := NewLogger(0)
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Minute)
			defer cancel()
			var (
				version string
				err     error
			)
			if len(save.External.ServerList) == 1 {
				tlsConfig, terr := save.TLSConfig()
				if terr != nil {
					return terr
				}
				version, err = embedded.SaveSnapshot(ctx, clientv3.Config{Endpoints: save.External.ServerList, TLS: tlsConfig, DialTimeout: 20 * time.Second}, args[0], logger)
			} else {
				version, err = embedded.SaveDataDirSnapshot(ctx, etcdDataDir(save.DataDir), args[0], logger)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Snapshot saved at %s (etcd storage version %s)\n", args[0], version)
			return nil
		},
	}
	save.AddFlags(saveCmd.Flags(), true)
	restore := options.NewEtcdSnapshotOptions()
	restoreCmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Create the embedded etcd of a new --data-dir from snapshot FILE",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := errors.Join(restore.Validate()...); err != nil {
				return err
			}
			dir := filepath.Join(restore.DataDir, "etcd")
			if err := embedded.RestoreSnapshot(args[0], dir, NewLogger(0)); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Restored %s into %s; start kapi with --data-dir=%s\n", args[0], dir, restore.DataDir)
			return nil
		},
	}
	restore.AddFlags(restoreCmd.Flags(), false)
	cmd.AddCommand(saveCmd, restoreCmd)
	return cmd
}

// etcdDataDir is the etcd data dir of --data-dir: <data-dir>/etcd for a
// kapi data dir, or dir itself when it is an etcd data dir (it holds
// member/, as the data dir of `kapi etcd` does).
func etcdDataDir(dir string) string {
	if fi, err := os.Stat(filepath.Join(dir, "member")); err == nil && fi.IsDir() {
		return dir
	}
	return filepath.Join(dir, "etcd")
}
