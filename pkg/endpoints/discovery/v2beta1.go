package discovery

import (
	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apidiscoveryv2beta1 "k8s.io/api/apidiscovery/v2beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// toV2Beta1 converts an aggregated list to apidiscovery.k8s.io/v2beta1,
// whose fields are the same as v2's. Slices are shared, not copied: both
// lists are immutable once built.
func toV2Beta1(in *apidiscoveryv2.APIGroupDiscoveryList) *apidiscoveryv2beta1.APIGroupDiscoveryList {
	out := &apidiscoveryv2beta1.APIGroupDiscoveryList{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroupDiscoveryList", APIVersion: apidiscoveryv2beta1.SchemeGroupVersion.String()},
		Items:    make([]apidiscoveryv2beta1.APIGroupDiscovery, len(in.Items)),
	}
	for i, g := range in.Items {
		og := apidiscoveryv2beta1.APIGroupDiscovery{ObjectMeta: g.ObjectMeta}
		for _, v := range g.Versions {
			ov := apidiscoveryv2beta1.APIVersionDiscovery{
				Version:   v.Version,
				Freshness: apidiscoveryv2beta1.DiscoveryFreshness(v.Freshness),
			}
			for _, r := range v.Resources {
				or := apidiscoveryv2beta1.APIResourceDiscovery{
					Resource:         r.Resource,
					ResponseKind:     r.ResponseKind,
					Scope:            apidiscoveryv2beta1.ResourceScope(r.Scope),
					SingularResource: r.SingularResource,
					Verbs:            r.Verbs,
					ShortNames:       r.ShortNames,
					Categories:       r.Categories,
				}
				for _, s := range r.Subresources {
					or.Subresources = append(or.Subresources, apidiscoveryv2beta1.APISubresourceDiscovery{
						Subresource:   s.Subresource,
						ResponseKind:  s.ResponseKind,
						AcceptedTypes: s.AcceptedTypes,
						Verbs:         s.Verbs,
					})
				}
				ov.Resources = append(ov.Resources, or)
			}
			og.Versions = append(og.Versions, ov)
		}
		out.Items[i] = og
	}
	return out
}
