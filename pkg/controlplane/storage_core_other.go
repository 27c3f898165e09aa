package controlplane

import (
	"context"

	"github.com/kapi-dev/kapi/pkg/controlplane/registry/componentstatus"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/node"
	"github.com/kapi-dev/kapi/pkg/controlplane/registry/replicationcontroller"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// The storage funcs of the core group's nodes, persistent volumes and
// claims, replication controllers, resource quotas and component
// statuses (their lines are in storage_core.go).

// statusStoreOf is the storage func of a resource that is a generic store
// with a status subresource (nodes, persistentvolumes, ...).
func statusStoreOf(newREST func(generic.RESTOptions) (*generic.Store, *generic.StatusREST, error)) storageFunc {
	return func(b *storageBuilder) (resourceStorage, error) {
		st, status, err := newREST(b.opts)
		if err != nil {
			return resourceStorage{}, err
		}
		return resourceStorage{storage: st, subresources: map[string]rest.Storage{"status": status}}, nil
	}
}

// nodeStorage is the nodes line: the resource and its status and proxy
// subresources.
func nodeStorage(b *storageBuilder) (resourceStorage, error) {
	st, status, err := node.NewREST(b.opts)
	if err != nil {
		return resourceStorage{}, err
	}
	return resourceStorage{storage: st, subresources: map[string]rest.Storage{"status": status, "proxy": node.NewProxyREST(st)}}, nil
}

// replicationControllerStorage is the replicationcontrollers line: the
// resource and its status and scale subresources.
func replicationControllerStorage(b *storageBuilder) (resourceStorage, error) {
	st, status, scale, err := replicationcontroller.NewREST(b.opts)
	if err != nil {
		return resourceStorage{}, err
	}
	return resourceStorage{storage: st, subresources: map[string]rest.Storage{"status": status, "scale": scale}}, nil
}

// componentStatusStorage is the componentstatuses line: upstream's
// components, and the storage's health as etcd-0 when the storage is etcd
// (Config.StorageHealth).
func componentStatusStorage(c Config) rest.Storage {
	var health []func(context.Context) error
	if c.StorageHealth != nil {
		health = append(health, c.StorageHealth)
	}
	return componentstatus.NewREST(componentstatus.DefaultServers(health...))
}
