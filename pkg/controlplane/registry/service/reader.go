package service

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Reader reads Services, their Endpoints and their EndpointSlices straight
// from the resources' stores (no authentication, authorization or
// admission): what the aggregator's proxy and webhook clients resolve a
// Service reference with. It is safe for concurrent use; a missing object
// is a NotFound API error. Its method set is serviceresolver.Lister
// (package pkg/webhook/serviceresolver).
type Reader struct {
	services  rest.Getter
	endpoints rest.Getter
	slices    rest.Lister
}

// NewReader returns a Reader on the services, endpoints and endpointslices
// resources.
func NewReader(services, endpoints rest.Getter, slices rest.Lister) *Reader {
	return &Reader{services: services, endpoints: endpoints, slices: slices}
}

// GetService returns the Service namespace/name.
func (r *Reader) GetService(ctx context.Context, namespace, name string) (*corev1.Service, error) {
	obj, err := r.services.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("get service %s/%s: got %T", namespace, name, obj)
	}
	return svc, nil
}

// GetEndpoints returns the Endpoints namespace/name.
func (r *Reader) GetEndpoints(ctx context.Context, namespace, name string) (*corev1.Endpoints, error) {
	obj, err := r.endpoints.Get(request.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	ep, ok := obj.(*corev1.Endpoints)
	if !ok {
		return nil, fmt.Errorf("get endpoints %s/%s: got %T", namespace, name, obj)
	}
	return ep, nil
}

// ListEndpointSlices returns the EndpointSlices of the Service
// namespace/service (label kubernetes.io/service-name); none is not an
// error.
func (r *Reader) ListEndpointSlices(ctx context.Context, namespace, service string) ([]discoveryv1.EndpointSlice, error) {
	obj, err := r.slices.List(request.WithNamespace(ctx, namespace), &metainternalversion.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service}),
	})
	if err != nil {
		return nil, err
	}
	list, ok := obj.(*discoveryv1.EndpointSliceList)
	if !ok {
		return nil, fmt.Errorf("list endpointslices in %s: got %T", namespace, obj)
	}
	return list.Items, nil
}
