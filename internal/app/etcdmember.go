package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/pkg/server/options"
)

// newEtcdMemberCommand returns `member list|remove`, a subcommand of
// `kapi etcd` (issue 20): the membership of the etcd cluster formed by
// kapi servers with --cluster-init and --join, reached through the data
// dir of one of them.
func newEtcdMemberCommand() *cobra.Command {
	o := options.NewEtcdMemberOptions()
	cmd := &cobra.Command{
		Use:   "member",
		Short: "List or remove the etcd members of a cluster of kapi servers",
		Args:  cobra.NoArgs,
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the etcd members",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cli, err := memberClient(o)
			if err != nil {
				return err
			}
			defer cli.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 15*time.Second)
			defer cancel()
			resp, err := cli.MemberList(ctx)
			if err != nil {
				return fmt.Errorf("list the etcd members: %w", err)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 3, ' ', 0)
			fmt.Fprintln(w, "ID\tNAME\tSTATUS\tPEER URLS\tCLIENT URLS")
			for _, m := range resp.Members {
				status := "started"
				switch {
				case m.Name == "":
					status = "unstarted"
				case m.IsLearner:
					status = "learner"
				}
				fmt.Fprintf(w, "%x\t%s\t%s\t%s\t%s\n", m.ID, m.Name, status, strings.Join(m.PeerURLs, ","), strings.Join(m.ClientURLs, ","))
			}
			return w.Flush()
		},
	}
	remove := &cobra.Command{
		Use:   "remove NAME|ID",
		Short: "Remove an etcd member (by name, or by hex ID for a member that never started)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cli, err := memberClient(o)
			if err != nil {
				return err
			}
			defer cli.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 45*time.Second)
			defer cancel()
			resp, err := cli.MemberList(ctx)
			if err != nil {
				return fmt.Errorf("list the etcd members: %w", err)
			}
			m := findMember(resp.Members, args[0])
			if m == nil {
				return fmt.Errorf("no etcd member named %q (kapi etcd member list shows them)", args[0])
			}
			for {
				_, err = cli.MemberRemove(ctx, m.ID)
				// etcd refuses while the removal would leave too few
				// members recently connected (StrictReconfigCheck).
				if err == nil || !errors.Is(err, rpctypes.ErrUnhealthy) || ctx.Err() != nil {
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
			if err != nil {
				return fmt.Errorf("remove etcd member %s (%x): %w", m.Name, m.ID, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Removed etcd member %s (%x). Its server can no longer start on its data dir; to replace it, start a server on a new --data-dir with --join and --token.\n", m.Name, m.ID)
			return nil
		},
	}
	for _, c := range []*cobra.Command{list, remove} {
		o.AddFlags(c.Flags())
		c.PreRunE = func(*cobra.Command, []string) error { return errors.Join(o.Validate()...) }
	}
	cmd.AddCommand(list, remove)
	return cmd
}

func findMember(members []*etcdserverpb.Member, nameOrID string) *etcdserverpb.Member {
	for _, m := range members {
		if m.Name != "" && m.Name == nameOrID {
			return m
		}
	}
	if id, err := strconv.ParseUint(nameOrID, 16, 64); err == nil {
		for _, m := range members {
			if m.ID == id {
				return m
			}
		}
	}
	return nil
}

// memberClient connects to the cluster's etcd members known to the data
// dir (its own first) with its member certificate.
func memberClient(o *options.EtcdMemberOptions) (*clientv3.Client, error) {
	st, err := loadClusterState(o.DataDir)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("%s is not the data dir of a clustered kapi server (it has no %s; see --cluster-init and --join)", o.DataDir, clusterStateFile)
	}
	certDir := o.CertDir
	if certDir == "" {
		certDir = filepath.Join(o.DataDir, "pki")
	}
	tlsConfig, err := (&transport.TLSInfo{
		CertFile:      filepath.Join(certDir, etcdMemberCertFile),
		KeyFile:       filepath.Join(certDir, etcdMemberKeyFile),
		TrustedCAFile: filepath.Join(certDir, etcdCACertFile),
	}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd member certificate in %s: %w", certDir, err)
	}
	endpoints := []string{st.ClientURL}
	for _, u := range st.ClientURLs {
		if !slices.Contains(endpoints, u) {
			endpoints = append(endpoints, u)
		}
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, TLS: tlsConfig, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("connect to the etcd members %v: %w", endpoints, err)
	}
	return cli, nil
}
