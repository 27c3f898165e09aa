package controlplane_test

import (
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestReviewsThroughServer creates every review kind through client-go's
// typed clients against a full server (real HTTPS, the filter chain's
// authentication and authorization), and checks discovery lists them with
// the create verb only.
func TestReviewsThroughServer(t *testing.T) {
	srv := kapitest.Start(t)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	for gv, names := range map[string][]string{
		"authorization.k8s.io/v1":  {"localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews"},
		"authentication.k8s.io/v1": {"selfsubjectreviews", "tokenreviews"},
	} {
		list, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("discovery of %s: %v", gv, err)
		}
		var got []string
		for _, r := range list.APIResources {
			got = append(got, r.Name)
			if !slices.Equal(r.Verbs, []string{"create"}) {
				t.Errorf("got verbs %v for %s, want [create]", r.Verbs, r.Name)
			}
			if want := r.Name == "localsubjectaccessreviews"; r.Namespaced != want {
				t.Errorf("got namespaced=%v for %s, want %v", r.Namespaced, r.Name, want)
			}
		}
		if !slices.Equal(got, names) {
			t.Errorf("got %s resources %v, want %v", gv, got, names)
		}
	}

	res := &authorizationv1.ResourceAttributes{Namespace: "default", Verb: "create", Resource: "configmaps"}
	ssar, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: res},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !ssar.Status.Allowed || ssar.Status.Denied {
		t.Errorf("got self review status %+v, want allowed", ssar.Status)
	}

	tests := []struct {
		name   string
		spec   authorizationv1.SubjectAccessReviewSpec
		allows bool
	}{
		// RBAC (the default mode) with the bootstrap policy.
		{"an authenticated user without bindings", authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"system:authenticated"}, ResourceAttributes: res}, false},
		{"a member of system:masters", authorizationv1.SubjectAccessReviewSpec{User: "alice", Groups: []string{"system:masters"}, ResourceAttributes: res}, true},
		{"the anonymous user on configmaps", authorizationv1.SubjectAccessReviewSpec{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, ResourceAttributes: res}, false},
		{"the anonymous user on /healthz", authorizationv1.SubjectAccessReviewSpec{User: "system:anonymous", Groups: []string{"system:unauthenticated"}, NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}}, true},
		// A review names the groups: without system:unauthenticated no
		// binding applies (as upstream).
		{"the anonymous user without groups on /healthz", authorizationv1.SubjectAccessReviewSpec{User: "system:anonymous", NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/healthz", Verb: "get"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sar, err := cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{Spec: tt.spec}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if sar.Status.Allowed != tt.allows {
				t.Errorf("got allowed=%v, want %v", sar.Status.Allowed, tt.allows)
			}
			lsar, err := cs.AuthorizationV1().LocalSubjectAccessReviews("default").Create(ctx, &authorizationv1.LocalSubjectAccessReview{Spec: tt.spec}, metav1.CreateOptions{})
			if tt.spec.ResourceAttributes == nil {
				if err == nil {
					t.Errorf("got local review %+v, want 422 (non-resource attributes)", lsar.Status)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if lsar.Status.Allowed != tt.allows || lsar.Namespace != "default" {
				t.Errorf("got local review allowed=%v in %q, want %v in default", lsar.Status.Allowed, lsar.Namespace, tt.allows)
			}
		})
	}

	ssrr, err := cs.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
		Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "default"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := ssrr.Status
	// The admin (system:masters) holds cluster-admin's rules (among those
	// of the roles every authenticated user holds).
	if !slices.ContainsFunc(st.ResourceRules, func(r authorizationv1.ResourceRule) bool { return slices.Equal(r.Resources, []string{"*"}) }) ||
		!slices.ContainsFunc(st.NonResourceRules, func(r authorizationv1.NonResourceRule) bool { return slices.Equal(r.NonResourceURLs, []string{"*"}) }) ||
		st.Incomplete {
		t.Errorf("got rules %+v, want everything, complete", st)
	}

	// The server is started without a token authenticator for reviews
	// (Config.TokenAuthenticator nil): unauthenticated, 201.
	tr, err := cs.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{
		Spec: authenticationv1.TokenReviewSpec{Token: "some-token"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Status.Authenticated {
		t.Errorf("got token review %+v, want unauthenticated", tr.Status)
	}
}
