package options

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v2"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kapi-dev/kapi/pkg/version"
)

// MetricsOptions are component-base's metrics flags (k8s.io/component-base
// v0.37 metrics/options.go), as kube-apiserver has them:
// --show-hidden-metrics-for-version, --disabled-metrics,
// --allow-metric-labels and --allow-metric-labels-manifest.
type MetricsOptions struct {
	// ShowHiddenMetricsForVersion, when set, must be the minor before the
	// one kapi implements ("1.36"); the deprecated families hidden in
	// this minor are then served again.
	ShowHiddenMetricsForVersion string
	// DisabledMetrics are the names of families not to serve (higher in
	// precedence than ShowHiddenMetricsForVersion).
	DisabledMetrics []string
	// AllowListMapping maps "metricName,labelName" to the comma-separated
	// values that label may have in that family; any other value is
	// served as "unexpected".
	AllowListMapping map[string]string
	// AllowListMappingManifest is a YAML file holding an AllowListMapping
	// (a flat map); not with AllowListMapping.
	AllowListMappingManifest string
}

// NewMetricsOptions returns the defaults: hidden metrics stay hidden.
func NewMetricsOptions() *MetricsOptions { return &MetricsOptions{} }

// AddFlags adds the metrics flags to fs, with component-base's help.
func (o *MetricsOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ShowHiddenMetricsForVersion, "show-hidden-metrics-for-version", o.ShowHiddenMetricsForVersion,
		"The previous version for which you want to show hidden metrics. "+
			"Only the previous minor version is meaningful, other values will not be allowed. "+
			"The format is <major>.<minor>, e.g.: '1.16'. "+
			"The purpose of this format is make sure you have the opportunity to notice if the next release hides additional metrics, "+
			"rather than being surprised when they are permanently removed in the release after that.")
	fs.StringSliceVar(&o.DisabledMetrics, "disabled-metrics", o.DisabledMetrics,
		"This flag provides an escape hatch for misbehaving metrics. "+
			"You must provide the fully qualified metric name in order to disable it. "+
			"Disclaimer: disabling metrics is higher in precedence than showing hidden metrics.")
	fs.StringToStringVar(&o.AllowListMapping, "allow-metric-labels", o.AllowListMapping,
		"The map from metric-label to value allow-list of this label. The key's format is <MetricName>,<LabelName>. "+
			"The value's format is <allowed_value>,<allowed_value>..."+
			"e.g. metric1,label1='v1,v2,v3', metric1,label2='v1,v2,v3' metric2,label1='v1,v2,v3'.")
	fs.StringVar(&o.AllowListMappingManifest, "allow-metric-labels-manifest", o.AllowListMappingManifest,
		"The path to the manifest file that contains the allow-list mapping. "+
			"The format of the file is the same as the flag --allow-metric-labels, i.e., \n"+
			"allowListMapping:\n  \"metric1,label1\": \"value11,value12\"\n  \"metric2,label2\": \"\"\n"+
			"Note that the flag --allow-metric-labels will override the manifest file.")
}

// ShowHidden reports whether the hidden families are to be served.
func (o *MetricsOptions) ShowHidden() bool { return o.ShowHiddenMetricsForVersion != "" }

// The names component-base accepts.
const (
	metricNameExpr = `[a-zA-Z_:][a-zA-Z0-9_:]*`
	labelNameExpr  = `[a-zA-Z_][a-zA-Z0-9_]*`
)

var (
	metricNameRE   = regexp.MustCompile(`^` + metricNameExpr + `$`)
	allowListKeyRE = regexp.MustCompile(`^` + metricNameExpr + `,` + labelNameExpr + `$`)
)

// metricsConfiguration is how component-base's error for both allow-list
// flags shows the options (its MetricsConfiguration's JSON).
type metricsConfiguration struct {
	ShowHiddenMetricsForVersion string            `json:"showHiddenMetricsForVersion,omitempty"`
	DisabledMetrics             []string          `json:"disabledMetrics,omitempty"`
	AllowListMapping            map[string]string `json:"allowListMapping,omitempty"`
	AllowListMappingManifest    string            `json:"allowListMappingManifest,omitempty"`
}

// Validate checks the flags as kube-apiserver v1.37 does, with its
// messages (checked against the reference binary): the hidden metrics'
// version must be the previous minor ("1.36"), disabled names and
// allow-list keys must be metric and label names, the manifest must be
// readable YAML of such keys, and only one of the two allow-list flags
// may be given.
func (o *MetricsOptions) Validate() []error {
	path := field.NewPath("metrics")
	var errs field.ErrorList
	if v := o.ShowHiddenMetricsForVersion; v != "" {
		if valid := fmt.Sprintf("%d.%d", version.KubeMajor, version.KubeMinor-1); v != valid {
			errs = append(errs, field.Invalid(path.Child("showHiddenMetricsForVersion"), v,
				fmt.Sprintf("must be omitted or have the value '%s'; only the previous minor version is allowed", valid)))
		}
	}
	for _, name := range o.DisabledMetrics {
		if !metricNameRE.MatchString(name) {
			errs = append(errs, field.Invalid(path.Child("disabledMetrics"), o.DisabledMetrics,
				fmt.Sprintf("must be fully qualified metric names matching %q, got %q", metricNameRE.String(), name)))
			break
		}
	}
	errs = append(errs, validateAllowList(o.AllowListMapping, path.Child("allowListMapping"))...)
	if m := o.AllowListMappingManifest; m != "" {
		p := path.Child("allowListMappingManifest")
		if mapping, err := readAllowListManifest(m); err != nil {
			errs = append(errs, field.Invalid(p, m, err.Error()))
		} else if kerrs := validateAllowList(mapping, p); len(kerrs) > 0 {
			errs = append(errs, field.Invalid(p, m, fmt.Sprintf("invalid allow list mapping in manifest: %v", kerrs)))
		}
	}
	if o.AllowListMapping != nil && o.AllowListMappingManifest != "" {
		errs = append(errs, field.Invalid(path, &metricsConfiguration{
			ShowHiddenMetricsForVersion: o.ShowHiddenMetricsForVersion,
			DisabledMetrics:             o.DisabledMetrics,
			AllowListMapping:            o.AllowListMapping,
			AllowListMappingManifest:    o.AllowListMappingManifest,
		}, "cannot specify both allowListMapping and allowListMappingManifest"))
	}
	if len(errs) == 0 {
		return nil
	}
	return errs.ToAggregate().Errors()
}

func validateAllowList(mapping map[string]string, p *field.Path) field.ErrorList {
	for k := range mapping {
		if !allowListKeyRE.MatchString(k) {
			return field.ErrorList{field.Invalid(p, mapping, fmt.Sprintf(
				"must have keys with format `metricName,labelName` where metricName matches %q and labelName matches %q", metricNameExpr, labelNameExpr))}
		}
	}
	return nil
}

// readAllowListManifest reads an --allow-metric-labels-manifest file: a
// flat YAML map of "metricName,labelName" to allowed values (not the
// nested allowListMapping: of the flag's help, which component-base
// refuses too).
func readAllowListManifest(path string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("failed to read allow list manifest: %w", err)
	}
	mapping := map[string]string{}
	if err := yaml.Unmarshal(data, &mapping); err != nil {
		return nil, fmt.Errorf("failed to parse allow list manifest: %w", err)
	}
	return mapping, nil
}

// LabelAllowList returns the label allow-lists to apply (nil: none):
// --allow-metric-labels' or else the manifest's. Call after Validate.
func (o *MetricsOptions) LabelAllowList() (map[string]string, error) {
	if o.AllowListMapping != nil {
		return o.AllowListMapping, nil
	}
	if o.AllowListMappingManifest == "" {
		return nil, nil
	}
	return readAllowListManifest(o.AllowListMappingManifest)
}
