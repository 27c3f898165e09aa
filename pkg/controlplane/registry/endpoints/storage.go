package endpoints

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = corev1.Resource("endpoints")

// NewREST returns the completed store of core/v1 endpoints (short name
// "ep"), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, corev1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &corev1.Endpoints{} },
		NewListFunc:               func() runtime.Object { return &corev1.EndpointsList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: corev1.Resource("endpoints"),
		ResourceShortNames:        []string{"ep"},
		NameValidator:             validation.ValidateEndpointsName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}

// strategy is endpoints' behaviour: namespaced, created by PUT too,
// unconditional updates allowed.
type strategy struct{}

// Strategy is the create and update strategy of endpoints.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy   = Strategy
	_ generic.UpdateStrategy   = Strategy
	_ rest.ResetFieldsStrategy = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate defaults port protocols to TCP.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	SetDefaults(obj.(*corev1.Endpoints))
}

// PrepareForUpdate defaults port protocols to TCP.
func (strategy) PrepareForUpdate(_ context.Context, obj, _ runtime.Object) {
	SetDefaults(obj.(*corev1.Endpoints))
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateEndpointsFields(obj.(*corev1.Endpoints))
}

func (strategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validation.ValidateEndpointsFields(obj.(*corev1.Endpoints))
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

// Canonicalize does nothing: kube-apiserver v1.37 stores subsets as
// given (its endpointsStrategy.Canonicalize is empty; repacking is the
// endpoints controller's business).
func (strategy) Canonicalize(runtime.Object) {}

func (strategy) AllowCreateOnUpdate() bool      { return true }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: none (endpoints have no status).
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set { return nil }

// SetDefaults applies kube's v1 defaults: port protocol TCP.
func SetDefaults(ep *corev1.Endpoints) {
	for i := range ep.Subsets {
		for j := range ep.Subsets[i].Ports {
			if ep.Subsets[i].Ports[j].Protocol == "" {
				ep.Subsets[i].Ports[j].Protocol = corev1.ProtocolTCP
			}
		}
	}
}

// TableConvertor renders endpoints as kubectl shows them: NAME ENDPOINTS
// AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "Endpoints", Type: "string", Description: corev1.Endpoints{}.SwaggerDoc()["subsets"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		ep, ok := obj.(*corev1.Endpoints)
		if !ok {
			return nil, false
		}
		return []any{ep.Name, FormatEndpoints(ep), table.Since(ep.CreationTimestamp)}, true
	},
}

// maxShown is how many addresses kubectl lists before "+ N more...".
const maxShown = 3

// FormatEndpoints is kubectl's ENDPOINTS column: ready "ip:port" pairs
// (bare IPs for subsets without ports), the first three, then
// "+ N more...", or "<none>".
func FormatEndpoints(ep *corev1.Endpoints) string {
	if len(ep.Subsets) == 0 {
		return "<none>"
	}
	var list []string
	more := false
	count := 0
	add := func(s string) {
		if len(list) == maxShown {
			more = true
			return
		}
		list = append(list, s)
	}
	for _, ss := range ep.Subsets {
		if len(ss.Ports) == 0 {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(a.IP)
			}
			continue
		}
		for _, p := range ss.Ports {
			count += len(ss.Addresses)
			for _, a := range ss.Addresses {
				add(net.JoinHostPort(a.IP, strconv.Itoa(int(p.Port))))
			}
		}
	}
	ret := strings.Join(list, ",")
	if more {
		return fmt.Sprintf("%s + %d more...", ret, count-maxShown)
	}
	if ret == "" {
		return "<none>"
	}
	return ret
}
