// Package nodeidentifier tells whether a user is a node (a kubelet) and
// which one, as upstream's pkg/auth/nodeidentifier: the user name is
// system:node:<name> and the user is in the group system:nodes.
package nodeidentifier

import (
	"strings"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Well-known node identity names.
const (
	// UserPrefix starts a node's user name.
	UserPrefix = "system:node:"
	// NodesGroup is the group every node is in.
	NodesGroup = "system:nodes"
)

// NodeIdentity returns the node name of u and whether u is a node. A user
// named system:node:... outside system:nodes is not a node; a member of
// system:nodes named system:node: (empty name) is a node that cannot be
// identified (name "", isNode true), which callers refuse.
func NodeIdentity(u *user.Info) (name string, isNode bool) {
	if u == nil || !strings.HasPrefix(u.Name, UserPrefix) || !u.InGroup(NodesGroup) {
		return "", false
	}
	return strings.TrimPrefix(u.Name, UserPrefix), true
}
