// Package limitrange serves core/v1 limitranges (short name "limits") as
// kube-apiserver does: a PUT of a missing limit range creates it, a
// create without a name gets a generated UUID as its name, and tables are
// the default NAME CREATED AT (upstream has no printer for LimitRange).
//
// Enforcing limit ranges on pods (the LimitRanger admission plugin) is
// not part of this package.
package limitrange
