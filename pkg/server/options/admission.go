package options

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kapi-dev/kapi/pkg/admission/defaulttolerationseconds"
	"github.com/kapi-dev/kapi/pkg/admission/plugins"
)

// AdmissionOptions select the admission plugins, as kube-apiserver's
// flags of the same names (k8s.io/apiserver/pkg/server/options/admission.go
// and kubernetes pkg/kubeapiserver/options/admission.go).
type AdmissionOptions struct {
	// EnablePlugins and DisablePlugins are --enable-admission-plugins and
	// --disable-admission-plugins: added to and removed from the default
	// set; the order given does not matter.
	EnablePlugins, DisablePlugins []string
	// ConfigFile is --admission-control-config-file.
	ConfigFile string
	// DefaultNotReadyTolerationSeconds and
	// DefaultUnreachableTolerationSeconds are DefaultTolerationSeconds'
	// flags.
	DefaultNotReadyTolerationSeconds    int64
	DefaultUnreachableTolerationSeconds int64
}

// NewAdmissionOptions returns upstream's defaults.
func NewAdmissionOptions() *AdmissionOptions {
	return &AdmissionOptions{
		DefaultNotReadyTolerationSeconds:    defaulttolerationseconds.DefaultSeconds,
		DefaultUnreachableTolerationSeconds: defaulttolerationseconds.DefaultSeconds,
	}
}

// AddFlags adds the admission flags to fs.
func (o *AdmissionOptions) AddFlags(fs *pflag.FlagSet) {
	// kube-apiserver v1.37.2's help (k8s.io/apiserver pkg/server/options
	// admission.go): the default set in running order, every plugin in
	// alphabetical order; kapi adds which ones it implements.
	defaults := strings.Join(plugins.EnabledNames(nil, nil), ", ")
	all := strings.Join(slices.Sorted(slices.Values(plugins.AllOrderedPlugins)), ", ")
	fs.StringSliceVar(&o.EnablePlugins, "enable-admission-plugins", o.EnablePlugins, fmt.Sprintf(
		"admission plugins that should be enabled in addition to default enabled ones (%s). "+
			"Comma-delimited list of admission plugins: %s. The order of plugins in this flag does not matter. "+
			"Plugins kapi does not implement are accepted and reported at start as not available; implemented: %s.",
		defaults, all, strings.Join(plugins.Implemented(), ", ")))
	fs.StringSliceVar(&o.DisablePlugins, "disable-admission-plugins", o.DisablePlugins, fmt.Sprintf(
		"admission plugins that should be disabled although they are in the default enabled plugins list (%s). "+
			"Comma-delimited list of admission plugins: %s. The order of plugins in this flag does not matter.",
		defaults, all))
	fs.StringVar(&o.ConfigFile, "admission-control-config-file", o.ConfigFile,
		"File with admission control configuration (an apiserver.config.k8s.io/v1 AdmissionConfiguration).")
	fs.Int64Var(&o.DefaultNotReadyTolerationSeconds, "default-not-ready-toleration-seconds", o.DefaultNotReadyTolerationSeconds,
		"Indicates the tolerationSeconds of the toleration for notReady:NoExecute that is added by default to every pod that does not already have such a toleration.")
	fs.Int64Var(&o.DefaultUnreachableTolerationSeconds, "default-unreachable-toleration-seconds", o.DefaultUnreachableTolerationSeconds,
		"Indicates the tolerationSeconds of the toleration for unreachable:NoExecute that is added by default to every pod that does not already have such a toleration.")
}

// Validate checks the flags: known plugin names, no name both enabled and
// disabled, a readable configuration file.
func (o *AdmissionOptions) Validate() []error {
	errs := plugins.ValidateNames(o.EnablePlugins, o.DisablePlugins)
	if _, err := plugins.ReadConfigFile(o.ConfigFile); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// Selection is the plugins to run, in upstream's order, with their
// configuration.
func (o *AdmissionOptions) Selection() (*plugins.Selection, error) {
	cfg, err := plugins.ReadConfigFile(o.ConfigFile)
	if err != nil {
		return nil, err
	}
	return &plugins.Selection{
		Names:                               plugins.EnabledNames(o.EnablePlugins, o.DisablePlugins),
		Configs:                             cfg,
		DefaultNotReadyTolerationSeconds:    o.DefaultNotReadyTolerationSeconds,
		DefaultUnreachableTolerationSeconds: o.DefaultUnreachableTolerationSeconds,
	}, nil
}
