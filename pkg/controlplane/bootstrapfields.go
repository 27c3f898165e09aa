package controlplane

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// apiserverManager is the field manager of kube-apiserver's own writes:
// its loopback client's user agent is kube-apiserver/<version>.
const apiserverManager = "kube-apiserver"

// createdAsAPIServer returns obj, a defaulted object about to be created
// straight in storage by a bootstrap hook, with the managed-fields entry
// kube-apiserver's bootstrap hooks leave by writing through their loopback
// client: an Update by kube-apiserver of the fields obj sets. storage is
// the resource's REST storage, whose reset fields the entry leaves out;
// the field manager is the one the resource's handlers share. The same
// create by a later server of the process reuses the entry the first
// computed (UpdateRepeatedCreate).
func createdAsAPIServer(storage rest.Storage, gvk schema.GroupVersionKind, obj runtime.Object) (runtime.Object, error) {
	fm, err := fieldmanager.ForStorage(storage, gvk)
	if err != nil {
		return nil, fmt.Errorf("field manager of %s: %w", gvk.Kind, err)
	}
	return fm.UpdateRepeatedCreate(storage.New(), obj, apiserverManager), nil
}
