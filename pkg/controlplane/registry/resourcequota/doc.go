// Package resourcequota serves core/v1 resourcequotas (short name "quota")
// and their status subresource, as kube-apiserver does: the status is
// cleared on create, kept by updates of the main resource and changed only
// through /status; tables show kubectl's NAME REQUEST LIMIT AGE.
//
// No quota controller runs behind kapi and the ResourceQuota admission
// plugin is not part of this package: status.hard and status.used are
// what their writers put there.
package resourcequota
