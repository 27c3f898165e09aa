package allocator

import (
	"log/slog"
	"sync"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/endpoints/fieldmanager"
)

// apiserverManager is the field manager of kube-apiserver's own writes:
// upstream's ipallocator creates IPAddresses through the loopback client,
// whose user agent is kube-apiserver/<version>.
const apiserverManager = "kube-apiserver"

// ipAddressShape is what the managed fields of a new IPAddress depend on:
// its labels are always the family and managed-by ones, so only which of
// the parentRef's fields are set changes the field set.
type ipAddressShape struct {
	group, resource, namespace, name bool
}

// ipAddressFieldSets caches, per shape, the fieldsV1 the field manager
// records for the create of an IPAddress of that shape.
var ipAddressFieldSets sync.Map // ipAddressShape -> *metav1.FieldsV1

// ipAddressFields returns the managed-fields entry kube-apiserver's
// create of obj through its loopback client records: an Update by
// kube-apiserver of the fields obj sets, now. The field set is computed by
// the ipaddresses resource's field manager, once per shape; false if it
// could not be (the object is then created without managed fields).
func ipAddressFields(obj *networkingv1.IPAddress) (metav1.ManagedFieldsEntry, bool) {
	var shape ipAddressShape
	if r := obj.Spec.ParentRef; r != nil {
		shape = ipAddressShape{group: r.Group != "", resource: r.Resource != "", namespace: r.Namespace != "", name: r.Name != ""}
	}
	set, ok := ipAddressFieldSets.Load(shape)
	if !ok {
		fm, err := fieldmanager.New(fieldmanager.Config{Kind: networkingv1.SchemeGroupVersion.WithKind("IPAddress")})
		if err != nil {
			slog.Error("IPAddress field manager", "err", err)
			return metav1.ManagedFieldsEntry{}, false
		}
		out := fm.UpdateNoErrors(&networkingv1.IPAddress{}, obj.DeepCopy(), apiserverManager).(*networkingv1.IPAddress)
		if len(out.ManagedFields) != 1 || out.ManagedFields[0].FieldsV1 == nil {
			return metav1.ManagedFieldsEntry{}, false
		}
		set, _ = ipAddressFieldSets.LoadOrStore(shape, out.ManagedFields[0].FieldsV1)
	}
	return metav1.ManagedFieldsEntry{
		Manager:    apiserverManager,
		Operation:  metav1.ManagedFieldsOperationUpdate,
		APIVersion: networkingv1.SchemeGroupVersion.String(),
		Time:       &metav1.Time{Time: time.Now().UTC()},
		FieldsType: "FieldsV1",
		FieldsV1:   set.(*metav1.FieldsV1).DeepCopy(),
	}, true
}
