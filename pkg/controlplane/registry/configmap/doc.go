// Package configmap serves core/v1 configmaps: keys are configmap keys,
// data and binaryData total at most 1 MiB, and `immutable: true` freezes
// the data (see pkg/controlplane/validation).
package configmap
