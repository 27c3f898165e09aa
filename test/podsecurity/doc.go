// Package podsecurity tests the PodSecurity admission plugin end to end:
// a kapi server configured by --admission-control-config-file, driven by
// kubectl 1.33, its denials, warnings and audit annotations.
package podsecurity
