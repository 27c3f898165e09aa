package endpointslice

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kapi-dev/kapi/pkg/controlplane/validation"
	"github.com/kapi-dev/kapi/pkg/registry/generic"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/registry/table"
)

// Resource is the resource served.
var Resource = discoveryv1.Resource("endpointslices")

// NewREST returns the completed store of discovery.k8s.io/v1
// endpointslices (no short name), on the storage opts makes for it.
func NewREST(opts generic.RESTOptions) (*generic.Store, error) {
	return generic.NewStore(opts, discoveryv1.SchemeGroupVersion, &generic.Store{
		NewFunc:                   func() runtime.Object { return &discoveryv1.EndpointSlice{} },
		NewListFunc:               func() runtime.Object { return &discoveryv1.EndpointSliceList{} },
		DefaultQualifiedResource:  Resource,
		SingularQualifiedResource: discoveryv1.Resource("endpointslice"),
		NameValidator:             validation.ValidateEndpointSliceName,
		CreateStrategy:            Strategy,
		UpdateStrategy:            Strategy,
		TableConvertor:            TableConvertor,
	})
}

// strategy is endpointslices' behaviour: namespaced, no create on update,
// unconditional updates allowed, generation tracking the content.
type strategy struct {
	generic.SpecGeneration
}

// Strategy is the create and update strategy of endpointslices.
var Strategy = strategy{}

var (
	_ generic.CreateStrategy     = Strategy
	_ generic.UpdateStrategy     = Strategy
	_ generic.GenerationStrategy = Strategy
	_ rest.ResetFieldsStrategy   = Strategy
)

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate applies the defaults.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	SetDefaults(obj.(*discoveryv1.EndpointSlice))
}

// PrepareForUpdate applies the defaults.
func (strategy) PrepareForUpdate(_ context.Context, obj, _ runtime.Object) {
	SetDefaults(obj.(*discoveryv1.EndpointSlice))
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateEndpointSliceFields(obj.(*discoveryv1.EndpointSlice))
}

func (strategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	s, o := obj.(*discoveryv1.EndpointSlice), old.(*discoveryv1.EndpointSlice)
	errs := validation.ValidateEndpointSliceFields(s)
	return append(errs, validation.ValidateEndpointSliceUpdateFields(s, o)...)
}

// WarningsOnCreate warns, as kube, about IP addresses written in a
// non-canonical form (e.g. with leading zeros).
func (strategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return warnings(obj.(*discoveryv1.EndpointSlice))
}

func (strategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return warnings(obj.(*discoveryv1.EndpointSlice))
}

func warnings(s *discoveryv1.EndpointSlice) []string {
	if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
		return nil
	}
	var out []string
	for i, ep := range s.Endpoints {
		for j, a := range ep.Addresses {
			out = append(out, utilvalidation.GetWarningsForIP(field.NewPath("endpoints").Index(i).Child("addresses").Index(j), a)...)
		}
	}
	return out
}

func (strategy) Canonicalize(runtime.Object)    {}
func (strategy) AllowCreateOnUpdate() bool      { return false }
func (strategy) AllowUnconditionalUpdate() bool { return true }

// GetResetFields: none (endpoint slices have no status).
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set { return nil }

// SetDefaults applies kube's v1 defaults: a port's name "" and protocol
// TCP.
func SetDefaults(s *discoveryv1.EndpointSlice) {
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Name == nil {
			empty := ""
			p.Name = &empty
		}
		if p.Protocol == nil {
			tcp := corev1.ProtocolTCP
			p.Protocol = &tcp
		}
	}
}

var sliceDoc = discoveryv1.EndpointSlice{}.SwaggerDoc()

// TableConvertor renders endpoint slices as kubectl shows them: NAME
// ADDRESSTYPE PORTS ENDPOINTS AGE.
var TableConvertor = table.Convertor{
	Columns: []metav1.TableColumnDefinition{
		table.NameColumn,
		{Name: "AddressType", Type: "string", Description: sliceDoc["addressType"]},
		{Name: "Ports", Type: "string", Description: sliceDoc["ports"]},
		{Name: "Endpoints", Type: "string", Description: sliceDoc["endpoints"]},
		table.AgeColumn,
	},
	Row: func(obj runtime.Object) ([]any, bool) {
		s, ok := obj.(*discoveryv1.EndpointSlice)
		if !ok {
			return nil, false
		}
		return []any{s.Name, string(s.AddressType), formatPorts(s.Ports), formatEndpoints(s.Endpoints), table.Since(s.CreationTimestamp)}, true
	},
}

const maxShown = 3

// formatPorts: the first three port numbers (a name, or "*", without
// one), then "+ N more...", or "<unset>".
func formatPorts(ports []discoveryv1.EndpointPort) string {
	var list []string
	for _, p := range ports {
		if len(list) == maxShown {
			break
		}
		s := "*"
		if p.Port != nil {
			s = strconv.Itoa(int(*p.Port))
		} else if p.Name != nil {
			s = *p.Name
		}
		list = append(list, s)
	}
	return withMore(list, len(ports))
}

// formatEndpoints: the first three addresses, then "+ N more...", or
// "<unset>".
func formatEndpoints(eps []discoveryv1.Endpoint) string {
	var list []string
	count := 0
	for _, ep := range eps {
		for _, a := range ep.Addresses {
			if len(list) < maxShown {
				list = append(list, a)
			}
			count++
		}
	}
	return withMore(list, count)
}

func withMore(list []string, count int) string {
	ret := strings.Join(list, ",")
	if count > maxShown {
		return fmt.Sprintf("%s + %d more...", ret, count-maxShown)
	}
	if ret == "" {
		return "<unset>"
	}
	return ret
}
