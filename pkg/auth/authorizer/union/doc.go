// Package union chains authorizers as kube-apiserver's
// --authorization-mode does (the first decision other than NoOpinion
// wins), and holds the simple authorizers of the modes: AlwaysAllow,
// AlwaysDeny, and the privileged-groups authorizer that always allows
// system:masters.
package union
