package tokenreview

import (
	"context"
	"slices"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

func TestCreate(t *testing.T) {
	// kapi's real token authenticator, adapted as the lead wires it.
	tokens := FromRequest(authenticator.Union(
		authenticator.NewTokenAuthenticator(map[string]*user.Info{
			"good": {Name: "alice", UID: "u-1", Groups: []string{"devs"}, Extra: map[string][]string{"scopes": {"a"}}},
		}),
	))
	tests := []struct {
		name      string
		tokens    TokenAuthenticator
		spec      authenticationv1.TokenReviewSpec
		wantAuth  bool
		wantUser  string
		wantError string
	}{
		{"a known token", tokens, authenticationv1.TokenReviewSpec{Token: "good"}, true, "alice", ""},
		{"an unknown token", tokens, authenticationv1.TokenReviewSpec{Token: "bad"}, false, "", "invalid bearer token"},
		{"audiences asked, none served", tokens, authenticationv1.TokenReviewSpec{Token: "good", Audiences: []string{"api"}}, false, "", "invalid bearer token"},
		{"no authenticator", nil, authenticationv1.TokenReviewSpec{Token: "good"}, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, err := NewREST(tt.tokens).Create(context.Background(), &authenticationv1.TokenReview{Spec: tt.spec}, nil, &metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := obj.(*authenticationv1.TokenReview).Status
			if st.Authenticated != tt.wantAuth || st.User.Username != tt.wantUser || st.Error != tt.wantError || len(st.Audiences) != 0 {
				t.Errorf("got %+v, want authenticated=%v user=%q error=%q, no audiences", st, tt.wantAuth, tt.wantUser, tt.wantError)
			}
			if tt.wantAuth {
				u := st.User
				if u.UID != "u-1" || !slices.Equal(u.Groups, []string{"devs", user.AllAuthenticated}) || !slices.Equal([]string(u.Extra["scopes"]), []string{"a"}) {
					t.Errorf("got user %+v, want uid, groups with system:authenticated, extra", u)
				}
			}
		})
	}
}

func TestCreateErrors(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		spec authenticationv1.TokenReviewSpec
		want string
	}{
		{"no token", context.Background(), authenticationv1.TokenReviewSpec{}, "token is required for TokenReview in authentication"},
		{"a namespace", request.WithNamespace(context.Background(), "ns"), authenticationv1.TokenReviewSpec{Token: "t"}, "namespace is not allowed on this type: ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewREST(nil).Create(tt.ctx, &authenticationv1.TokenReview{Spec: tt.spec}, nil, nil)
			if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want 400 %q", err, tt.want)
			}
		})
	}
}
