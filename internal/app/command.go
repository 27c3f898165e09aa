package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/kapi-dev/kapi/pkg/server"
	"github.com/kapi-dev/kapi/pkg/version"
)

// NewCommand returns the kapi command. Running it starts the server until
// SIGTERM or SIGINT.
func NewCommand() *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "kapi",
		Short: "kapi is a Kubernetes API server that starts in milliseconds on embedded storage",
		Long: `kapi serves the Kubernetes API. By default it keeps its data in an embedded
etcd under --data-dir, generates its own PKI, and writes a cluster-admin
kubeconfig to <data-dir>/admin.kubeconfig.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if len(a) > 0 {
					return fmt.Errorf("%q does not take any arguments, got %q", cmd.CommandPath(), args)
				}
			}
			o.BootstrapImage = usesBootstrapImage(cmd.Flags(), o)
			completed, err := o.Complete()
			if err != nil {
				return err
			}
			// klog is the k8s libraries' global logger; only the process
			// (never a library or test) points it at ours.
			completed.Logger = NewLogger(completed.Verbosity)
			klog.SetSlogLogger(completed.Logger)
			return Run(server.SetupSignalContext(), completed)
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			v := version.Get()
			fmt.Fprintf(cmd.OutOrStdout(), "kapi %s (Kubernetes API %s, %s, %s)\n", version.Kapi(), strings.SplitN(v.GitVersion, "+", 2)[0], v.GoVersion, v.Platform)
		},
	})
	addEnvtestCommands(cmd)
	cmd.SetErr(os.Stderr)
	return cmd
}
