package accessreview

import (
	"context"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

// FuzzSelectors feeds arbitrary selectors (raw and as requirements)
// through validation and a review: nothing may panic, and a review that
// validates is answered.
func FuzzSelectors(f *testing.F) {
	for _, s := range [][4]string{
		{"a=b", "x in (y)", "k", "In"},
		{"a==b==c", "!!", "", "fake"},
		{"", "", "spec.nodeName", "NotIn"},
		{"metadata.name!=x,a=b", "a,b!=c", "k", "Exists"},
	} {
		f.Add(s[0], s[1], s[2], s[3], "v")
	}
	f.Fuzz(func(t *testing.T, rawField, rawLabel, key, op, value string) {
		ra := &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods",
			FieldSelector: &authorizationv1.FieldSelectorAttributes{RawSelector: rawField},
			LabelSelector: &authorizationv1.LabelSelectorAttributes{RawSelector: rawLabel},
		}
		if rawField == "" {
			ra.FieldSelector.Requirements = []metav1.FieldSelectorRequirement{{Key: key, Operator: metav1.FieldSelectorOperator(op), Values: []string{value}}}
		}
		if rawLabel == "" {
			ra.LabelSelector.Requirements = []metav1.LabelSelectorRequirement{{Key: key, Operator: metav1.LabelSelectorOperator(op), Values: []string{value}}}
		}
		ctx := request.WithUser(context.Background(), &user.Info{Name: "alice"})
		obj, err := NewSelfSubjectAccessReviewREST(nil).Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: ra}}, nil, nil)
		valid := len(ValidateSelfSubjectAccessReview(&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: ra}})) == 0
		if valid && (err != nil || !obj.(*authorizationv1.SelfSubjectAccessReview).Status.Allowed) {
			t.Errorf("got %v for a valid review, want allowed", err)
		}
		if !valid && err == nil {
			t.Error("got no error for an invalid review, want 422")
		}
	})
}
