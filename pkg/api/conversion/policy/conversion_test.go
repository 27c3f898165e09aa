package policy

import (
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	policyv1beta1 "k8s.io/api/policy/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

// TestEvictionV1beta1Decodes decodes a policy/v1beta1 Eviction body into
// the policy/v1 type the eviction subresource serves, as the handlers'
// decoder does, and converts back.
func TestEvictionV1beta1Decodes(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := RegisterConversions(s); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"apiVersion":"policy/v1beta1","kind":"Eviction","metadata":{"name":"p","namespace":"ns"},"deleteOptions":{"gracePeriodSeconds":5,"dryRun":["All"]}}`)
	into := &policyv1.Eviction{}
	dec := serializer.NewCodecFactory(s).UniversalDecoder(policyv1.SchemeGroupVersion)
	obj, _, err := dec.Decode(body, nil, into)
	if err != nil {
		t.Fatal(err)
	}
	ev, ok := obj.(*policyv1.Eviction)
	if !ok || ev.Name != "p" || ev.Namespace != "ns" || ev.DeleteOptions == nil || *ev.DeleteOptions.GracePeriodSeconds != 5 || ev.DeleteOptions.DryRun[0] != "All" {
		t.Fatalf("decoded %#v", obj)
	}
	back := &policyv1beta1.Eviction{}
	if err := s.Convert(ev, back, nil); err != nil {
		t.Fatal(err)
	}
	if back.Name != "p" || back.DeleteOptions.GracePeriodSeconds == nil || *back.DeleteOptions.GracePeriodSeconds != 5 {
		t.Fatalf("back to v1beta1: %#v", back)
	}
}
