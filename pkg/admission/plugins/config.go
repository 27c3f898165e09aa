package plugins

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// Configs are the plugins' configurations by plugin name, as JSON.
type Configs map[string][]byte

// admissionConfiguration is apiserver.config.k8s.io/v1 (and v1alpha1)
// AdmissionConfiguration.
type admissionConfiguration struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Plugins    []admissionPluginConf `json:"plugins"`
}

type admissionPluginConf struct {
	Name          string `json:"name"`
	Path          string `json:"path"`
	Configuration any    `json:"configuration"`
}

// ReadConfigFile reads --admission-control-config-file: an
// AdmissionConfiguration whose plugins entries carry each plugin's
// configuration inline ("configuration") or in a file ("path", relative to
// the configuration file's directory), as upstream's
// ReadAdmissionConfiguration. An empty path means no configuration.
func ReadConfigFile(path string) (Configs, error) {
	if path == "" {
		return Configs{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to read admission control configuration from %q [%w]", path, err)
	}
	var ac admissionConfiguration
	if err := yaml.UnmarshalStrict(data, &ac); err != nil {
		return nil, fmt.Errorf("unable to decode admission control configuration %q: %w", path, err)
	}
	switch ac.APIVersion {
	case "apiserver.config.k8s.io/v1", "apiserver.config.k8s.io/v1alpha1", "apiserver.k8s.io/v1alpha1":
	default:
		return nil, fmt.Errorf("admission control configuration %q: apiVersion %q is not supported (want apiserver.config.k8s.io/v1)", path, ac.APIVersion)
	}
	if ac.Kind != "AdmissionConfiguration" {
		return nil, fmt.Errorf("admission control configuration %q: kind %q is not AdmissionConfiguration", path, ac.Kind)
	}
	out := Configs{}
	for i, p := range ac.Plugins {
		if p.Name == "" {
			return nil, fmt.Errorf("admission control configuration %q: plugins[%d].name is required", path, i)
		}
		if _, dup := out[p.Name]; dup {
			return nil, fmt.Errorf("admission control configuration %q: plugin %q is configured twice", path, p.Name)
		}
		switch {
		case p.Configuration != nil:
			b, err := yaml.Marshal(p.Configuration)
			if err != nil {
				return nil, fmt.Errorf("admission control configuration %q: plugin %q: %w", path, p.Name, err)
			}
			if out[p.Name], err = yaml.YAMLToJSON(b); err != nil {
				return nil, fmt.Errorf("admission control configuration %q: plugin %q: %w", path, p.Name, err)
			}
		case p.Path != "":
			pp := p.Path
			if !filepath.IsAbs(pp) {
				pp = filepath.Join(filepath.Dir(path), pp)
			}
			b, err := os.ReadFile(pp)
			if err != nil {
				return nil, fmt.Errorf("admission control configuration %q: plugin %q: %w", path, p.Name, err)
			}
			if out[p.Name], err = yaml.YAMLToJSON(b); err != nil {
				return nil, fmt.Errorf("admission control configuration %q: plugin %q: file %q: %w", path, p.Name, pp, err)
			}
		default:
			out[p.Name] = nil
		}
	}
	return out, nil
}
