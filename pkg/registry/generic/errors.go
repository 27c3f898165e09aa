package generic

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// Messages of kube-apiserver used when a storage error carries none.
const (
	msgListExpired     = "The resourceVersion for the provided list is too old."
	msgTooLargeRVCause = "Too large resource version"
)

// InterpretStorageError translates an error of storage.Interface into the
// API error (a *apierrors.StatusError) kube-apiserver answers, for the
// object name of qualifiedResource ("" for lists and watches):
//
//	key not found               404 NotFound        configmaps "x" not found
//	key exists                  409 AlreadyExists   configmaps "x" already exists
//	conflict / precondition     409 Conflict        Operation cannot be fulfilled on configmaps "x": ...
//	expired revision            410 Expired         (the storage's message, e.g. too old resource version: 5 (10))
//	expired continue token      410 Expired         metadata.continue = the fresh token, when there is one
//	too large resourceVersion   504 Timeout         Timeout: Too large resource version: ..., cause
//	                                                ResourceVersionTooLarge, retryAfterSeconds 1
//	invalid continue token      400 BadRequest      invalid continue token: ...
//	invalid argument            400 BadRequest      (the storage's message)
//	request too large           413 RequestEntityTooLarge
//	unreachable                 500 ServerTimeout   retryAfterSeconds 2
//	invalid object              500 InternalError
//	corrupt object (a get)      500 InternalError   Internal error occurred: StorageError: corrupt object, ...
//	request deadline exceeded   504 Timeout         request did not complete within requested timeout - ...
//
// API errors pass through unchanged, and so do other errors that are not
// storage errors (a cancelled context, ...), which the REST edge answers 500.
func InterpretStorageError(err error, qualifiedResource schema.GroupResource, name string) error {
	return interpret(err, qualifiedResource, name, "storage")
}

// interpret is InterpretStorageError naming the operation (get, list,
// create, ...) in ServerTimeout errors.
func interpret(err error, qr schema.GroupResource, name, op string) error {
	if err == nil {
		return nil
	}
	// A stored object that cannot be decoded is kube-apiserver's 500
	// naming the storage error, even when the cause is an API error
	// (a custom resource's failing conversion webhook).
	if storage.IsCorruptObj(err) {
		return apierrors.NewInternalError(err)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	// A storage call cut by the request's deadline (etcd unreachable, a
	// slow write) is the 504 Timeout kube-apiserver's request finisher
	// answers, not a 500.
	if errors.Is(err, context.DeadlineExceeded) {
		return apierrors.NewTimeoutError(fmt.Sprintf("request did not complete within requested timeout - %v", context.DeadlineExceeded), 0)
	}
	var se *storage.StorageError
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code {
	case storage.ErrCodeKeyNotFound:
		return apierrors.NewNotFound(qr, name)
	case storage.ErrCodeKeyExists:
		return apierrors.NewAlreadyExists(qr, name)
	case storage.ErrCodeResourceVersionConflicts:
		msg := se.Message
		if msg == "" {
			msg = OptimisticLockErrorMsg
		}
		return apierrors.NewConflict(qr, name, errors.New(msg))
	case storage.ErrCodeExpired:
		msg := se.Message
		if strings.HasPrefix(msg, "required revision") { // etcd's own words
			msg = ""
		}
		return apierrors.NewResourceExpired(orDefault(msg, msgListExpired))
	case storage.ErrCodeContinueExpired:
		st := apierrors.NewResourceExpired(orDefault(se.Message, storage.MsgContinueExpired))
		if next, ok := storage.ContinueHint(err); ok {
			st.ErrStatus.ListMeta.Continue = next
		}
		return st
	case storage.ErrCodeTooLargeResourceVersion:
		msg := se.Message
		if !strings.HasPrefix(msg, msgTooLargeRVCause) {
			msg = fmt.Sprintf("%s: %d", msgTooLargeRVCause, se.ResourceVersion)
		}
		st := apierrors.NewTimeoutError(msg, 1)
		st.ErrStatus.Details.Causes = []metav1.StatusCause{{
			Type:    metav1.CauseTypeResourceVersionTooLarge,
			Message: msgTooLargeRVCause,
		}}
		return st
	case storage.ErrCodeInvalidContinue:
		msg := se.Message
		if !strings.HasPrefix(msg, "invalid continue token") {
			msg = "invalid continue token: " + msg
		}
		return apierrors.NewBadRequest(msg)
	case storage.ErrCodeInvalidArgument:
		return apierrors.NewBadRequest(orDefault(se.Message, "invalid request options"))
	case storage.ErrCodeRequestTooLarge:
		return apierrors.NewRequestEntityTooLargeError(orDefault(se.Message, "object is too large"))
	case storage.ErrCodeUnreachable:
		return apierrors.NewServerTimeout(qr, op, 2)
	default:
		return apierrors.NewInternalError(err)
	}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
