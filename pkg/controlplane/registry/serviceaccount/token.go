package serviceaccount

import (
	"context"
	"fmt"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/google/uuid"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/serviceaccount"
	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
)

// Token lifetimes of upstream (pkg/apis/authentication/validation and
// pkg/serviceaccount/claims.go).
const (
	// MinTokenAgeSec is the shortest token a TokenRequest may ask for.
	MinTokenAgeSec = 10 * 60
	// maxTokenAgeSec is the longest (2^32 seconds).
	maxTokenAgeSec = 1 << 32
	// DefaultTokenAgeSec is spec.expirationSeconds when unset (the API's
	// defaulting).
	DefaultTokenAgeSec = 60 * 60
	// WarnOnlyBoundTokenExpirationSeconds is the lifetime the kubelet asks
	// for pod tokens, which --service-account-extend-token-expiration
	// extends to ExpirationExtensionSeconds (warning after the requested
	// time).
	WarnOnlyBoundTokenExpirationSeconds = 60*60 + 7
	// ExpirationExtensionSeconds is a year.
	ExpirationExtensionSeconds = 24 * 365 * 60 * 60
)

var tokenRequestKind = authenticationv1.SchemeGroupVersion.WithKind("TokenRequest")

// IssuedCredentialIDAnnotation is the audit annotation naming the token a
// TokenRequest issued ("JTI=<jti>").
const IssuedCredentialIDAnnotation = "authentication.kubernetes.io/issued-credential-id"

// TokenIssuer signs the tokens of TokenRequests.
type TokenIssuer interface {
	Issue(serviceaccount.BoundToken) (string, time.Time, error)
}

// TokenConfig configures serviceaccounts/token.
type TokenConfig struct {
	Issuer TokenIssuer
	// APIAudiences are the audiences of a request that names none
	// (--api-audiences).
	APIAudiences []string
	// MaxExpiration shortens longer requests
	// (--service-account-max-token-expiration); 0: no limit.
	MaxExpiration time.Duration
	// ExtendExpiration is --service-account-extend-token-expiration.
	ExtendExpiration bool
}

// TokenREST serves serviceaccounts/<name>/token (upstream's TokenREST):
// POST a TokenRequest, get it back with a signed token in its status.
type TokenREST struct {
	cfg      TokenConfig
	accounts rest.Getter
	pods     rest.Getter
	secrets  rest.Getter
	nodes    rest.Getter
	now      func() time.Time
}

var (
	_ rest.Storage                  = (*TokenREST)(nil)
	_ rest.Creater                  = (*TokenREST)(nil)
	_ rest.GroupVersionKindProvider = (*TokenREST)(nil)
)

// NewTokenREST returns the token subresource over the serviceaccounts,
// pods, secrets and nodes resources (pods and nodes may be nil when not
// served: binding to them is then refused as an unknown kind).
func NewTokenREST(cfg TokenConfig, accounts, pods, secrets, nodes rest.Getter) *TokenREST {
	return &TokenREST{cfg: cfg, accounts: accounts, pods: pods, secrets: secrets, nodes: nodes, now: time.Now}
}

// New implements rest.Storage.
func (*TokenREST) New() runtime.Object { return &authenticationv1.TokenRequest{} }

// Destroy implements rest.Storage: the stores are other resources'.
func (*TokenREST) Destroy() {}

// GroupVersionKind implements rest.GroupVersionKindProvider:
// authentication.k8s.io/v1 TokenRequest.
func (*TokenREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return tokenRequestKind
}

// Create implements rest.Creater: it issues a token for the service
// account the URL names, as upstream does (checks and messages of
// pkg/registry/core/serviceaccount/storage/token.go, v1.37).
func (r *TokenREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, _ *metav1.CreateOptions) (runtime.Object, error) {
	req, ok := obj.(*authenticationv1.TokenRequest)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenRequest: %T", obj))
	}
	req = req.DeepCopy()
	info, _ := request.RequestInfoFrom(ctx)
	name := ""
	if info != nil {
		name = info.Name
	}
	namespace := request.NamespaceFrom(ctx)
	if namespace == "" {
		return nil, apierrors.NewBadRequest("namespace is required")
	}
	gk := tokenRequestKind.GroupKind()
	if req.Name != "" && req.Name != name {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata").Child("name"), req.Name, "must match the service account name if specified")})
	}
	if req.Namespace != "" && req.Namespace != namespace {
		return nil, apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("metadata").Child("namespace"), req.Namespace, "must match the service account namespace if specified")})
	}
	saObj, err := r.accounts.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	sa, ok := saObj.(*corev1.ServiceAccount)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("serviceaccounts storage returned a %T", saObj))
	}
	if req.UID != "" && req.UID != sa.UID {
		// TokenRequestServiceAccountUIDValidation (on in v1.37).
		return nil, apierrors.NewConflict(schema.GroupResource{Group: gk.Group, Resource: gk.Kind}, name,
			fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
	}
	if len(req.Spec.Audiences) == 0 {
		req.Spec.Audiences = slices.Clone(r.cfg.APIAudiences)
	}
	if req.Name == "" {
		req.Name = sa.Name
	}
	if req.Namespace == "" {
		req.Namespace = sa.Namespace
	}
	if req.UID == "" {
		req.UID = sa.UID
	}
	if req.Spec.ExpirationSeconds == nil {
		secs := int64(DefaultTokenAgeSec)
		req.Spec.ExpirationSeconds = &secs
	}
	now := r.now()
	req.CreationTimestamp = metav1.NewTime(now)
	req.Status = authenticationv1.TokenRequestStatus{}
	if errs := validateTokenRequest(req); len(errs) != 0 {
		return nil, apierrors.NewInvalid(gk, "", errs)
	}
	if createValidation != nil {
		if err := createValidation(ctx, req.DeepCopyObject()); err != nil {
			return nil, err
		}
	}

	bound := serviceaccount.BoundToken{ServiceAccount: sa, Audiences: req.Spec.Audiences}
	if ref := req.Spec.BoundObjectRef; ref != nil {
		if err := r.bind(ctx, &bound, ref, name, namespace); err != nil {
			return nil, err
		}
	}

	secs := *req.Spec.ExpirationSeconds
	if maxSecs := int64(r.cfg.MaxExpiration / time.Second); maxSecs > 0 && secs > maxSecs {
		warning.AddWarning(ctx, fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", secs, maxSecs))
		secs = maxSecs
		req.Spec.ExpirationSeconds = &secs
	}
	exp := secs
	if r.cfg.ExtendExpiration && bound.Pod != nil && secs == WarnOnlyBoundTokenExpirationSeconds && subset(req.Spec.Audiences, r.cfg.APIAudiences) {
		bound.WarnAfter = time.Duration(secs) * time.Second
		exp = ExpirationExtensionSeconds
	}
	bound.Expiration = time.Duration(exp) * time.Second
	bound.ID = uuid.NewString()
	token, _, err := r.cfg.Issuer.Issue(bound)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %w", err))
	}
	// As upstream (ServiceAccountTokenJTI, on by default): the audit event
	// names the credential issued, as the authenticator's credential-id
	// extra later names it.
	audit.AddAnnotation(ctx, IssuedCredentialIDAnnotation, serviceaccount.CredentialIDForJTI(bound.ID))
	req.Status = authenticationv1.TokenRequestStatus{
		Token:               token,
		ExpirationTimestamp: metav1.NewTime(now.Add(time.Duration(secs) * time.Second)),
	}
	return req, nil
}

// bind resolves spec.boundObjectRef into b.
func (r *TokenREST) bind(ctx context.Context, b *serviceaccount.BoundToken, ref *authenticationv1.BoundObjectReference, saName, namespace string) error {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var uid types.UID
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod" && r.pods != nil:
		obj, err := r.pods.Get(getContext(ctx, "pods", ref.Name, namespace), ref.Name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("pods storage returned a %T", obj))
		}
		if pod.Spec.ServiceAccountName != saName {
			return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", saName))
		}
		uid = pod.UID
		b.Pod = pod
		if nodeName := pod.Spec.NodeName; nodeName != "" && r.nodes != nil {
			// The node the pod runs on is reported in the claims
			// (ServiceAccountTokenPodNodeInfo); a missing node is named
			// without its UID, as upstream does.
			obj, err := r.nodes.Get(getContext(ctx, "nodes", nodeName, ""), nodeName, &metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				b.Node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}
			case err != nil:
				return apierrors.NewInternalError(err)
			default:
				node, ok := obj.(*corev1.Node)
				if !ok {
					return apierrors.NewInternalError(fmt.Errorf("nodes storage returned a %T", obj))
				}
				b.Node = node
			}
		}
	case gvk.Group == "" && gvk.Kind == "Node" && r.nodes != nil:
		obj, err := r.nodes.Get(getContext(ctx, "nodes", ref.Name, ""), ref.Name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		node, ok := obj.(*corev1.Node)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("nodes storage returned a %T", obj))
		}
		uid = node.UID
		b.Node = node
	case gvk.Group == "" && gvk.Kind == "Secret":
		obj, err := r.secrets.Get(getContext(ctx, "secrets", ref.Name, namespace), ref.Name, &metav1.GetOptions{})
		if err != nil {
			return err
		}
		secret, ok := obj.(*corev1.Secret)
		if !ok {
			return apierrors.NewInternalError(fmt.Errorf("secrets storage returned a %T", obj))
		}
		uid = secret.UID
		b.Secret = secret
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if ref.UID != "" && uid != ref.UID {
		return apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return nil
}

// getContext is ctx for a get of another core/v1 resource: its namespace
// and request info (errors name that resource), as upstream's newContext.
func getContext(ctx context.Context, resource, name, namespace string) context.Context {
	ctx = request.WithNamespace(ctx, namespace)
	return request.WithRequestInfo(ctx, &request.RequestInfo{
		IsResourceRequest: true,
		Verb:              "get",
		APIPrefix:         "api",
		APIVersion:        "v1",
		Namespace:         namespace,
		Resource:          resource,
		Name:              name,
		Parts:             []string{resource, name},
	})
}

// validateTokenRequest is upstream's ValidateTokenRequest.
func validateTokenRequest(tr *authenticationv1.TokenRequest) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	secs := *tr.Spec.ExpirationSeconds
	if secs < MinTokenAgeSec {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), secs, "may not specify a duration less than 10 minutes"))
	}
	if secs > maxTokenAgeSec {
		errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), secs, "may not specify a duration larger than 2^32 seconds"))
	}
	return errs
}

// subset reports whether every one of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
