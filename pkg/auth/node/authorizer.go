package node

import (
	"context"
	"errors"
	"fmt"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kapi-dev/kapi/pkg/auth/authorizer"
	"github.com/kapi-dev/kapi/pkg/auth/nodeidentifier"
	"github.com/kapi-dev/kapi/pkg/auth/rbac"
	"github.com/kapi-dev/kapi/pkg/auth/user"
)

// NamespaceNodeLease is the namespace of the nodes' heartbeat leases.
const NamespaceNodeLease = "kube-node-lease"

// Authorizer is the Node authorizer. Requests of users that are not nodes
// get no opinion, so the next authorizer decides.
type Authorizer struct {
	graph *Graph
	rules []rbacv1.PolicyRule
}

var _ authorizer.Authorizer = (*Authorizer)(nil)

// New returns the Node authorizer over g, with the static node rules
// (rbac.NodeRules).
func New(g *Graph) *Authorizer {
	return &Authorizer{graph: g, rules: rbac.NodeRules()}
}

type gr struct{ group, resource string }

// Authorize implements authorizer.Authorizer with upstream's decisions and
// reasons (plugin/pkg/auth/authorizer/node/node_authorizer.go, with
// AuthorizeNodeWithSelectors, GA in v1.34).
func (z *Authorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	node, isNode := nodeidentifier.NodeIdentity(a.User)
	if !isNode {
		return authorizer.DecisionNoOpinion, "", nil
	}
	if node == "" {
		return authorizer.DecisionNoOpinion, fmt.Sprintf("unknown node for user %q", a.User.Name), nil
	}
	if a.ResourceRequest {
		switch (gr{a.APIGroup, a.Resource}) {
		case gr{"", "secrets"}:
			return z.readNamespaced(node, Secret, a)
		case gr{"", "configmaps"}:
			return z.readNamespaced(node, ConfigMap, a)
		case gr{"", "persistentvolumeclaims"}:
			if a.Subresource == "status" {
				return z.statusUpdate(node, PersistentVolumeClaim, a)
			}
			return z.get(node, PersistentVolumeClaim, a)
		case gr{"", "persistentvolumes"}:
			return z.get(node, PersistentVolume, a)
		case gr{"resource.k8s.io", "resourceclaims"}:
			return z.get(node, ResourceClaim, a)
		case gr{"storage.k8s.io", "volumeattachments"}:
			return z.get(node, VolumeAttachment, a)
		case gr{"", "serviceaccounts"}:
			return z.createToken(node, a)
		case gr{"coordination.k8s.io", "leases"}:
			return z.ownNamed(node, a, "", "can only get, create, update, patch, or delete a node lease",
				"can only access node lease with the same name as the requesting node")
		case gr{"storage.k8s.io", "csinodes"}:
			return z.ownNamed(node, a, "cannot authorize CSINode subresources", "can only get, create, update, patch, or delete a CSINode",
				"can only access CSINode with the same name as the requesting node")
		case gr{"resource.k8s.io", "resourceslices"}:
			return z.resourceSlice(node, a)
		case gr{"", "nodes"}:
			return z.node(node, a)
		case gr{"", "pods"}:
			return z.pod(node, a)
		}
	}
	for i := range z.rules {
		if rbac.RuleAllows(a, &z.rules[i]) {
			return authorizer.DecisionAllow, "", nil
		}
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// RulesFor answers as upstream: a node's rules cannot be listed
// (incomplete, with an error); anyone else has none from this authorizer.
func (z *Authorizer) RulesFor(_ context.Context, u *user.Info, _ string) ([]authorizationv1.ResourceRule, []authorizationv1.NonResourceRule, bool, error) {
	if _, isNode := nodeidentifier.NodeIdentity(u); isNode {
		return nil, nil, true, errors.New("node authorizer does not support user rule resolution")
	}
	return nil, nil, false, nil
}

func noOpinion(reason string) (authorizer.Decision, string, error) {
	return authorizer.DecisionNoOpinion, reason, nil
}

func allow() (authorizer.Decision, string, error) { return authorizer.DecisionAllow, "", nil }

// related allows a named object reachable from node.
func (z *Authorizer) related(node string, k Kind, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Name == "" {
		return noOpinion("No Object name found")
	}
	if !z.graph.Related(node, k, a.Namespace, a.Name) {
		return noOpinion(fmt.Sprintf("no relationship found between node '%s' and this object", node))
	}
	return allow()
}

func (z *Authorizer) statusUpdate(node string, k Kind, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Verb != "update" && a.Verb != "patch" {
		return noOpinion("can only get/update/patch this type")
	}
	if a.Subresource != "status" {
		return noOpinion("can only update status subresource")
	}
	return z.related(node, k, a)
}

func (z *Authorizer) get(node string, k Kind, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Verb != "get" {
		return noOpinion("can only get individual resources of this type")
	}
	if a.Subresource != "" {
		return noOpinion("cannot get subresource")
	}
	return z.related(node, k, a)
}

func (z *Authorizer) readNamespaced(node string, k Kind, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.Verb {
	case "get", "list", "watch":
	default:
		return noOpinion("can only read resources of this type")
	}
	if a.Subresource != "" {
		return noOpinion("cannot read subresource")
	}
	if a.Namespace == "" {
		return noOpinion("can only read namespaced object of this type")
	}
	return z.related(node, k, a)
}

func (z *Authorizer) createToken(node string, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Verb != "create" || a.Name == "" {
		return noOpinion("can only create tokens for individual service accounts")
	}
	if a.Subresource != "token" {
		return noOpinion("can only create token subresource of serviceaccount")
	}
	if !z.graph.Related(node, ServiceAccount, a.Namespace, a.Name) {
		return noOpinion(fmt.Sprintf("no relationship found between node '%s' and this object", node))
	}
	return allow()
}

// ownNamed is a node's access to its Lease (in kube-node-lease, when
// subresourceReason is "") or its CSINode: the object named as the node
// (the name of a create is checked by NodeRestriction).
func (z *Authorizer) ownNamed(node string, a authorizer.Attributes, subresourceReason, verbReason, nameReason string) (authorizer.Decision, string, error) {
	switch a.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return noOpinion(verbReason)
	}
	if subresourceReason == "" {
		if a.Namespace != NamespaceNodeLease {
			return noOpinion(fmt.Sprintf("can only access leases in the %q system namespace", NamespaceNodeLease))
		}
	} else if a.Subresource != "" {
		return noOpinion(subresourceReason)
	}
	if a.Verb != "create" && a.Name != node {
		return noOpinion(nameReason)
	}
	return allow()
}

func (z *Authorizer) resourceSlice(node string, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.Subresource != "" {
		return noOpinion("cannot authorize ResourceSlice subresources")
	}
	switch a.Verb {
	case "create":
		return allow()
	case "get", "update", "patch", "delete":
		return z.related(node, ResourceSlice, a)
	case "watch", "list", "deletecollection":
		if hasField(a, "spec.nodeName", node) {
			return allow()
		}
		return noOpinion("can only list/watch/deletecollection resourceslices with nodeName field selector")
	}
	return noOpinion("only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection")
}

func (z *Authorizer) node(node string, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "create", "update", "patch":
			return allow()
		case "get", "list", "watch":
			switch a.Name {
			case node:
				return allow()
			case "":
				return noOpinion(fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", node))
			default:
				return noOpinion(fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", node, a.Name))
			}
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return allow()
		}
	}
	return noOpinion("")
}

func (z *Authorizer) pod(node string, a authorizer.Attributes) (authorizer.Decision, string, error) {
	switch a.Subresource {
	case "":
		switch a.Verb {
		case "get":
			return z.get(node, Pod, a)
		case "list", "watch":
			if hasField(a, "spec.nodeName", node) {
				return allow()
			}
			if a.Name != "" {
				return z.related(node, Pod, a)
			}
			return noOpinion("can only list/watch pods with spec.nodeName field selector")
		case "create", "delete":
			return allow()
		}
	case "status":
		if a.Verb == "update" || a.Verb == "patch" {
			return allow()
		}
	case "eviction":
		if a.Verb == "create" {
			return allow()
		}
	}
	return noOpinion("")
}

// hasField reports whether the field selector requires field=value.
func hasField(a authorizer.Attributes, field, value string) bool {
	for _, r := range a.FieldSelector {
		if r.Field == field && r.Operator == selection.Equals && r.Value == value {
			return true
		}
	}
	return false
}
