package selfsubjectreview

import (
	"context"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// REST answers creates of SelfSubjectReviews.
type REST struct {
	// Now is the clock for creationTimestamp; nil means time.Now.
	Now func() time.Time
}

// NewREST returns the storage.
func NewREST() *REST { return &REST{} }

var (
	_ rest.Creater              = (*REST)(nil)
	_ rest.Scoper               = (*REST)(nil)
	_ rest.SingularNameProvider = (*REST)(nil)
)

// New returns an empty SelfSubjectReview.
func (*REST) New() runtime.Object { return &authenticationv1.SelfSubjectReview{} }

// Destroy does nothing: nothing is held.
func (*REST) Destroy() {}

// NamespaceScoped is false: reviews are cluster-scoped.
func (*REST) NamespaceScoped() bool { return false }

// GetSingularName is "selfsubjectreview".
func (*REST) GetSingularName() string { return "selfsubjectreview" }

// Create fills status.userInfo with the user of the request. As upstream,
// the body's content is ignored (besides being a SelfSubjectReview) and
// creationTimestamp is now.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	if _, ok := obj.(*authenticationv1.SelfSubjectReview); !ok {
		return nil, apierrors.NewBadRequest("not a SelfSubjectReview")
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	info := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: append([]string(nil), u.Groups...)}
	if len(u.Extra) > 0 {
		info.Extra = make(map[string]authenticationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			info.Extra[k] = append(authenticationv1.ExtraValue(nil), v...)
		}
	}
	return &authenticationv1.SelfSubjectReview{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(now())},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: info},
	}, nil
}
