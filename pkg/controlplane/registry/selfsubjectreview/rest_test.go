package selfsubjectreview

import (
	"context"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
)

func TestCreateAnswersTheRequestingUser(t *testing.T) {
	at := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	r := &REST{Now: func() time.Time { return at }}
	ctx := request.WithUser(context.Background(), &user.Info{
		Name: "alice", UID: "u-1", Groups: []string{"devs", "system:authenticated"},
		Extra: map[string][]string{"scopes": {"a", "b"}},
	})
	obj, err := r.Create(ctx, &authenticationv1.SelfSubjectReview{}, nil, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*authenticationv1.SelfSubjectReview)
	ui := got.Status.UserInfo
	if ui.Username != "alice" || ui.UID != "u-1" || !slices.Equal(ui.Groups, []string{"devs", "system:authenticated"}) || !slices.Equal([]string(ui.Extra["scopes"]), []string{"a", "b"}) {
		t.Errorf("got user info %+v, want alice/u-1 with groups and extra", ui)
	}
	if !got.CreationTimestamp.Time.Equal(at) {
		t.Errorf("got creationTimestamp %v, want %v", got.CreationTimestamp, at)
	}

	// Without a user in the context (cannot happen behind authentication):
	// a clear 400, not a panic.
	if _, err := r.Create(context.Background(), &authenticationv1.SelfSubjectReview{}, nil, nil); !apierrors.IsBadRequest(err) {
		t.Errorf("got %v, want BadRequest", err)
	}
}
