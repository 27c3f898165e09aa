// Package resourcequota is kube-controller-manager's resource quota
// controller (kubernetes pkg/controller/resourcequota, v1.37), run
// in-process: it keeps each ResourceQuota's status (hard: the spec's
// limits; used: what the objects of its namespace in its scopes charge,
// computed by package quota) up to date. A quota is recomputed when it is
// created or its limits change, when an object it may count is deleted
// (pods also when they end), and every resync period.
package resourcequota
