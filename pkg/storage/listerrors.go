package storage

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// maxCorruptListErrs caps the corrupt objects one list reports, as
// kube-apiserver's etcd3 store (maxCorruptObjErrsToAggregate): the list
// stops at the 100th.
const maxCorruptListErrs = 100

// errTooManyCorrupt is upstream's reason for stopping at the cap.
var errTooManyCorrupt = errors.New("too many errors, the list is truncated")

// ListReadErrors collects what a list meets that it cannot read, as
// kube-apiserver v1.37's etcd3 store does with AllowUnsafeMalformedObjectDeletion
// (beta, on by default): a stored object that cannot be decoded (for a
// custom resource, one its conversion webhook fails on) does not end the
// list at once; the list reads on, and fails in the end with every corrupt
// object it met (up to 100), as [ListReadErrors.Err] describes. Any other
// error ends the list. The zero value is ready to use.
type ListReadErrors struct {
	errs  []*StorageError
	abort error
}

// Add records err, the error of decoding the object stored at key (the
// backend's whole key: etcd's, with the server's --etcd-prefix). It
// reports whether the list must stop: after a non-corrupt error, or at
// the cap.
func (a *ListReadErrors) Add(key string, err error) bool {
	if a.abort != nil {
		return true
	}
	var se *StorageError
	if errors.As(err, &se) && (se.Code == ErrCodeCorruptObj || se.Code == ErrCodeInvalidObj && se.Message == "decode") {
		a.errs = append(a.errs, NewCorruptObjError(key, se.ResourceVersion, se.Err))
		if len(a.errs) >= maxCorruptListErrs {
			a.abort = errTooManyCorrupt
			return true
		}
		return false
	}
	a.abort = err
	return true
}

// Any reports whether anything was recorded.
func (a *ListReadErrors) Any() bool { return len(a.errs) > 0 || a.abort != nil }

// Err returns nil when nothing was recorded; the error that ended the list
// when no object was corrupt; else kube-apiserver's answer naming the
// corrupt objects of resource gr (k8s.io/apiserver storage/etcd3
// aggregatedStorageError.NewAPIStatusError): 500, reason StorageReadError,
// details {group, kind: the resource, name: "list"}, one cause
// (UnexpectedServerResponse, field: the key) per corrupt object, then one
// for why the list stopped early (TooMany at the cap), and the message
//
//	failed to read one or more <resource>.<group> from the storage: <first cause> (and N more)
func (a *ListReadErrors) Err(gr schema.GroupResource) error {
	if len(a.errs) == 0 {
		return a.abort
	}
	causes := make([]metav1.StatusCause, 0, len(a.errs)+1)
	for _, e := range a.errs {
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Field: e.Key, Message: e.Error()})
	}
	switch {
	case errors.Is(a.abort, errTooManyCorrupt):
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeTooMany, Message: errTooManyCorrupt.Error()})
	case a.abort != nil:
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Message: a.abort.Error()})
	}
	msg := fmt.Sprintf("failed to read one or more %s from the storage: %v", gr.String(), a.errs[0])
	if len(a.errs) > 1 {
		msg = fmt.Sprintf("%s (and %d more)", msg, len(a.errs)-1)
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusInternalServerError,
		Reason:  metav1.StatusReasonStoreReadError,
		Message: msg,
		Details: &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource, Name: "list", Causes: causes},
	}}
}

// CorruptDeleter is implemented by the backends (and passed on by the watch
// cache): the storage side of kube-apiserver's unsafe deletion of corrupt
// objects (DELETE with ignoreStoreReadErrorWithClusterBreakingPotential;
// AllowUnsafeMalformedObjectDeletion, beta and on by default in v1.37).
type CorruptDeleter interface {
	// DeleteCorrupt deletes the object stored at key only if it cannot be
	// decoded, reading it from the backend itself: ErrCodeKeyNotFound if
	// there is none, a *DecodableError if it decodes. With dryRun it
	// checks the same and deletes nothing. No precondition, validation or
	// finalizer applies: there is no object to apply them to.
	DeleteCorrupt(ctx context.Context, key string, dryRun bool) error
}

// DecodableError is DeleteCorrupt's refusal of an object that decodes, with
// kube-apiserver's text (its etcd3 store's InvalidObjError, Code 4), naming
// the backend's whole key (etcd's, with the prefix).
type DecodableError struct{ Key string }

func (e *DecodableError) Error() string {
	return "StorageError: invalid object, Code: 4, Key: " + e.Key +
		", ResourceVersion: 0, AdditionalErrorMsg: unsafe deletion is not allowed because the object is decodable from storage"
}

// ErrNoCorruptDeleter is upstream's error when a resource's storage cannot
// delete corrupt objects (the REST edge answers 500 with it).
var ErrNoCorruptDeleter = errors.New("no unsafe deleter provided, can not honor ignoreStoreReadErrorWithClusterBreakingPotential")
