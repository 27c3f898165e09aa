package policy

import (
	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// RegisterConversions teaches s both directions of the Eviction
// conversion.
func RegisterConversions(s *runtime.Scheme) error {
	if err := s.AddConversionFunc((*policyv1beta1.Eviction)(nil), (*policyv1.Eviction)(nil),
		func(a, b any, _ conversion.Scope) error {
			in, out := a.(*policyv1beta1.Eviction), b.(*policyv1.Eviction)
			out.ObjectMeta = in.ObjectMeta
			out.DeleteOptions = in.DeleteOptions
			return nil
		}); err != nil {
		return err
	}
	return s.AddConversionFunc((*policyv1.Eviction)(nil), (*policyv1beta1.Eviction)(nil),
		func(a, b any, _ conversion.Scope) error {
			in, out := a.(*policyv1.Eviction), b.(*policyv1beta1.Eviction)
			out.ObjectMeta = in.ObjectMeta
			out.DeleteOptions = in.DeleteOptions
			return nil
		})
}
