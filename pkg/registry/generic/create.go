package generic

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"

	"github.com/kapi-dev/kapi/pkg/endpoints/request"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
	"github.com/kapi-dev/kapi/pkg/registry/rest"
	"github.com/kapi-dev/kapi/pkg/storage"
)

// Name generation, as kube's SimpleNameGenerator: the base is cut so that
// base plus the random suffix fits in 63 characters.
const (
	maxNameLength          = 63
	randomLength           = 5
	maxGeneratedNameLength = maxNameLength - randomLength
	// maxNameGenerationCreateAttempts is how many generated names Create
	// tries before giving up (kube: 8 keeps the chance of failure below
	// 0.1% with a million names taken).
	maxNameGenerationCreateAttempts = 8
)

// SimpleNameGenerator returns base (cut to 58 characters) followed by 5
// random characters from kube's alphabet ("bcdfghjklmnpqrstvwxz2456789").
func SimpleNameGenerator(base string) string {
	if len(base) > maxGeneratedNameLength {
		base = base[:maxGeneratedNameLength]
	}
	return base + utilrand.String(randomLength)
}

// Create implements rest.Creater.
func (e *Store) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	if e.CreateStrategy == nil {
		return nil, apierrors.NewMethodNotSupported(e.qualifiedResource(ctx), "create")
	}
	if options == nil {
		options = &metav1.CreateOptions{}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if m.GetGenerateName() == "" || m.GetName() != "" {
		return e.create(ctx, obj, createValidation, options)
	}
	// A generated name that is taken is retried with another one.
	var out runtime.Object
	for range maxNameGenerationCreateAttempts {
		out, err = e.create(ctx, obj.DeepCopyObject(), createValidation, options)
		if err == nil || !apierrors.IsAlreadyExists(err) {
			break
		}
	}
	return out, err
}

func (e *Store) create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	fillSystemFields(m)
	// As kube-apiserver, whose storage only refuses a resourceVersion it
	// can parse as a revision (ErrResourceVersionSetOnCreate, a 500
	// `resourceVersion should not be set on objects to be created`) and
	// clears anything else: an unparsable resourceVersion ("abc", "-1")
	// is dropped and the object created (kubernetes/kubernetes#113847
	// records that behaviour).
	if _, err := storage.ParseResourceVersion(m.GetResourceVersion()); err != nil {
		m.SetResourceVersion("")
	}
	if m.GetGenerateName() != "" && m.GetName() == "" {
		m.SetName(e.GenerateNameFunc(m.GetGenerateName()))
	}
	if err := e.guard("validating the object", func() error { return e.beforeCreate(ctx, obj) }); err != nil {
		return nil, err
	}
	if createValidation != nil {
		if err := e.guard("admission", func() error { return createValidation(ctx, obj.DeepCopyObject()) }); err != nil {
			return nil, err
		}
	}
	name, err := e.ObjectNameFunc(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	key, err := e.KeyFunc(ctx, name)
	if err != nil {
		return nil, err
	}
	qr := e.qualifiedResource(ctx)
	out := e.NewFunc()
	if err := e.storageCreate(ctx, key, obj, out, isDryRun(options.DryRun)); err != nil {
		err = interpret(err, qr, name, "create")
		if !apierrors.IsAlreadyExists(err) {
			return nil, err
		}
		if m.GetGenerateName() != "" {
			// As kube: with generateName set, a taken name is the server's
			// failure to generate one (Create retries it).
			return nil, apierrors.NewGenerateNameConflict(qr, name, 1)
		}
		var se *apierrors.StatusError
		if errors.As(err, &se) {
			if errGet := e.Storage.Get(ctx, key, storage.GetOptions{}, out); errGet == nil {
				if cur, errAcc := meta.Accessor(out); errAcc == nil && cur.GetDeletionTimestamp() != nil {
					se.ErrStatus.Message = fmt.Sprintf("object is being deleted: %s", se.ErrStatus.Message)
				}
			}
		}
		return nil, err
	}
	return out, nil
}

// fillSystemFields sets what the server owns on a new object: uid and
// creationTimestamp; an object is never created being deleted.
func fillSystemFields(m metav1.Object) {
	m.SetCreationTimestamp(metav1.Now())
	m.SetUID(uuid.NewUUID())
	m.SetDeletionTimestamp(nil)
	m.SetDeletionGracePeriodSeconds(nil)
}

// beforeCreate is kube's rest.BeforeCreate: namespace, strategy
// preparation, generation, validation, warnings, canonicalization.
func (e *Store) beforeCreate(ctx context.Context, obj runtime.Object) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	gvk, err := e.objectKind(obj)
	if err != nil {
		return err
	}
	namespaced := e.CreateStrategy.NamespaceScoped()
	if err := EnsureObjectNamespaceMatchesRequestNamespace(expectedNamespace(ctx, namespaced), m); err != nil {
		return err
	}
	e.CreateStrategy.PrepareForCreate(ctx, obj)
	if _, ok := e.CreateStrategy.(GenerationStrategy); ok {
		if _, unset := e.CreateStrategy.(NoGenerationOnCreate); !unset {
			m.SetGeneration(1)
		}
	}
	errs := validateObjectMeta(&validationMeta{Object: m}, namespaced, e.NameValidator)
	if e.NameDeclarative != nil {
		errs = nameDeclarative(errs, e.NameDeclarative, m.GetName())
	}
	errs = append(errs, e.CreateStrategy.Validate(ctx, obj)...)
	if len(errs) > 0 {
		return apierrors.NewInvalid(gvk.GroupKind(), m.GetName(), orderDeclarative(obj, internalValues(obj, errs)))
	}
	for _, w := range e.CreateStrategy.WarningsOnCreate(ctx, obj) {
		warning.AddWarning(ctx, w)
	}
	e.CreateStrategy.Canonicalize(obj)
	return nil
}

// expectedNamespace is the namespace an object must have: the request's
// for namespaced resources, none otherwise.
func expectedNamespace(ctx context.Context, namespaced bool) string {
	if namespaced {
		return request.NamespaceFrom(ctx)
	}
	return ""
}

// EnsureObjectNamespaceMatchesRequestNamespace is kube's rule: an object
// without a namespace gets the request's, a cluster-scoped request clears
// the object's, and two different namespaces are 400 BadRequest.
func EnsureObjectNamespaceMatchesRequestNamespace(requestNamespace string, obj metav1.Object) error {
	switch objNamespace := obj.GetNamespace(); {
	case objNamespace == requestNamespace:
		return nil
	case objNamespace == metav1.NamespaceNone:
		obj.SetNamespace(requestNamespace)
		return nil
	case requestNamespace == metav1.NamespaceNone:
		obj.SetNamespace(metav1.NamespaceNone)
		return nil
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
}
