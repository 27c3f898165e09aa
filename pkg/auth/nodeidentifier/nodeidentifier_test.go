package nodeidentifier

import (
	"testing"

	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// Cases from upstream's pkg/auth/nodeidentifier/default_test.go behaviour.
func TestNodeIdentity(t *testing.T) {
	for _, tc := range []struct {
		u      *user.Info
		name   string
		isNode bool
	}{
		{nil, "", false},
		{&user.Info{Name: "system:node:n1", Groups: []string{"system:nodes"}}, "n1", true},
		{&user.Info{Name: "system:node:n1"}, "", false},
		{&user.Info{Name: "system:node:n1", Groups: []string{"system:masters"}}, "", false},
		{&user.Info{Name: "n1", Groups: []string{"system:nodes"}}, "", false},
		{&user.Info{Name: "system:node:", Groups: []string{"system:nodes"}}, "", true},
		{&user.Info{Name: "System:Node:n1", Groups: []string{"system:nodes"}}, "", false},
	} {
		name, isNode := NodeIdentity(tc.u)
		if name != tc.name || isNode != tc.isNode {
			t.Errorf("NodeIdentity(%+v) = %q, %v; want %q, %v", tc.u, name, isNode, tc.name, tc.isNode)
		}
	}
}
