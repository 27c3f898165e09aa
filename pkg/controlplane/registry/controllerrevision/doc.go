// Package controllerrevision serves apps/v1 controllerrevisions (the
// history statefulsets and daemonsets keep, read by `kubectl rollout
// history` and `rollout undo`), as kube-apiserver's
// pkg/registry/apps/controllerrevision (v1.37): data is required and
// immutable, revision is not negative.
package controllerrevision
