// Package plugins is the registry of admission plugins: upstream's names in
// upstream's fixed order (AllOrderedPlugins), which are on by default, the
// constructor of each plugin kapi implements, and the
// AdmissionConfiguration file (--admission-control-config-file) that gives
// plugins their configuration.
//
// Adding a plugin is one line in the constructors table of registry.go.
package plugins
