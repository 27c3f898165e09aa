// Package manager runs the controllers kapi carries in place of
// kube-controller-manager's (garbage collector, default service accounts,
// root CA publisher) against the server's own API through a loopback
// client, only while this server leads: several kapis sharing one etcd
// elect one with a Lease, as kube-controller-manager instances do.
//
// Which controllers run is --controllers, with kube-controller-manager's
// names, aliases and syntax ("*", "name", "-name"; see [Known] and
// [Enabled]).
//
// The leadership cycle:
//
//	wait for the Lease's namespace ─> campaign (client-go leader election, Lease lock)
//	    ├─ another holds the Lease: Ready closes (this server follows); keep campaigning
//	    └─ acquired: build the controllers and their informers, run them;
//	         Ready closes once the controllers that gate it have synced
//	         ├─ lease lost: controllers stop, campaign again
//	         └─ Run's ctx ends: controllers stop first, then the Lease is released
//	            (so another server takes over within its retry period)
package manager
