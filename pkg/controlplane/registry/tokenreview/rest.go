package tokenreview

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// TokenAuthenticator authenticates a bearer token. It returns (user,
// audiences, true, nil) for a token it knows, (nil, nil, false, nil) for one
// it has no opinion on, and an error for a token it rejects (the error's
// text becomes status.error). The audiences asked for are on the context
// (authenticator.AudiencesFrom; none: the API server's own); the audiences
// returned are those the token is valid for among them. It must be safe
// for concurrent use (authenticator.Token has this method set).
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (*user.Info, []string, bool, error)
}

// RequestAuthenticator is the request-level authenticator of the filter
// chain (authenticator.Request has this method set).
type RequestAuthenticator interface {
	AuthenticateRequest(r *http.Request) (*user.Info, bool, error)
}

// FromRequest adapts a request authenticator (such as the server's union of
// front-proxy, client-certificate and token authenticators) to a
// TokenAuthenticator, as upstream does: the token is presented alone, in
// an "Authorization: Bearer" header of an otherwise empty request, so only
// the token authenticators can recognize it. Such authenticators know no
// audiences: a review asking for some gets no opinion.
func FromRequest(a RequestAuthenticator) TokenAuthenticator { return requestTokens{a} }

type requestTokens struct{ a RequestAuthenticator }

func (t requestTokens) AuthenticateToken(ctx context.Context, token string) (*user.Info, []string, bool, error) {
	if auds, ok := authenticator.AudiencesFrom(ctx); ok && len(auds) > 0 {
		return nil, nil, false, nil
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", nil)
	if err != nil {
		return nil, nil, false, fmt.Errorf("token review request: %w", err)
	}
	r.Header.Set("Authorization", "Bearer "+token)
	u, ok, err := t.a.AuthenticateRequest(r)
	return u, nil, ok, err
}

// errInvalidToken is upstream's answer for a token no authenticator
// accepts (its bearer-token authenticator's default error).
var errInvalidToken = errors.New("invalid bearer token")

// REST answers creates of TokenReviews.
type REST struct{ tokens TokenAuthenticator }

// NewREST authenticates with tokens; nil answers every review
// unauthenticated.
func NewREST(tokens TokenAuthenticator) *REST { return &REST{tokens: tokens} }

var (
	_ rest.Creater              = (*REST)(nil)
	_ rest.Scoper               = (*REST)(nil)
	_ rest.SingularNameProvider = (*REST)(nil)
)

// New returns an empty TokenReview.
func (*REST) New() runtime.Object { return &authenticationv1.TokenReview{} }

// Destroy does nothing: nothing is held.
func (*REST) Destroy() {}

// NamespaceScoped is false.
func (*REST) NamespaceScoped() bool { return false }

// GetSingularName is "tokenreview".
func (*REST) GetSingularName() string { return "tokenreview" }

// Create authenticates spec.token and returns the review with its status:
// authenticated, the user (with an extra map, empty rather than absent, as
// upstream), the audiences and the error. spec.audiences, if set, are the
// audiences the token must be meant for (else the API server's own), as
// upstream's TokenReview REST asks its authenticators.
func (r *REST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	tr, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenReview: %T", obj))
	}
	if ns := request.NamespaceFrom(ctx); ns != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is not allowed on this type: %v", ns))
	}
	if tr.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	if createValidation != nil {
		if err := createValidation(ctx, obj.DeepCopyObject()); err != nil {
			return nil, err
		}
	}
	if r.tokens == nil {
		return tr, nil
	}
	if len(tr.Spec.Audiences) > 0 {
		ctx = authenticator.WithAudiences(ctx, tr.Spec.Audiences)
	}
	u, auds, ok, err := r.tokens.AuthenticateToken(ctx, tr.Spec.Token)
	tr.Status.Authenticated = ok
	if !ok && err == nil {
		// No authenticator had an opinion: upstream's bearer-token
		// authenticator turns that into its default error.
		err = errInvalidToken
	}
	if err != nil {
		tr.Status.Error = err.Error()
	}
	if ok && u != nil {
		tr.Status.User = authenticationv1.UserInfo{
			Username: u.Name,
			UID:      u.UID,
			Groups:   slices.Clone(u.Groups),
			Extra:    make(map[string]authenticationv1.ExtraValue, len(u.Extra)),
		}
		for k, v := range u.Extra {
			tr.Status.User.Extra[k] = slices.Clone(v)
		}
		tr.Status.Audiences = slices.Clone(auds)
	}
	return tr, nil
}
