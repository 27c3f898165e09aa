package storage

import (
	"errors"
	"fmt"
)

// Error codes of a [StorageError].
const (
	ErrCodeKeyNotFound int = iota + 1
	ErrCodeKeyExists
	ErrCodeResourceVersionConflicts // also a failed precondition
	ErrCodeInvalidObj
	ErrCodeUnreachable
	ErrCodeExpired                 // revision older than the compacted one (410)
	ErrCodeTooLargeResourceVersion // revision newer than the current one
	ErrCodeContinueExpired         // continue token's revision was compacted (410)
	ErrCodeInvalidContinue         // malformed continue token (400)
	ErrCodeRequestTooLarge         // object over the backend's size limit (413)
	// ErrCodeInvalidArgument: the request's options are malformed or
	// contradict each other (a resourceVersion that is not a revision, an
	// unknown resourceVersionMatch, resourceVersion together with a continue
	// token). The REST edge answers 400 BadRequest with Message.
	ErrCodeInvalidArgument
	// ErrCodeCorruptObj: a stored object that cannot be decoded (for a
	// custom resource, one its conversion webhook fails on), read by a
	// get; the REST edge answers 500 InternalError naming it, as
	// kube-apiserver's corrupt-object error. See [NewCorruptObjError].
	ErrCodeCorruptObj
)

// upstreamCorruptObjCode is kube-apiserver's number of its
// ErrCodeCorruptObj, which its message prints.
const upstreamCorruptObjCode = 7

var codeNames = map[int]string{
	ErrCodeKeyNotFound:              "key not found",
	ErrCodeKeyExists:                "key exists",
	ErrCodeResourceVersionConflicts: "resource version conflicts",
	ErrCodeInvalidObj:               "invalid object",
	ErrCodeUnreachable:              "server unreachable",
	ErrCodeExpired:                  "resource version expired",
	ErrCodeTooLargeResourceVersion:  "too large resource version",
	ErrCodeContinueExpired:          "continue token expired",
	ErrCodeInvalidContinue:          "invalid continue token",
	ErrCodeRequestTooLarge:          "request too large",
	ErrCodeInvalidArgument:          "invalid argument",
	ErrCodeCorruptObj:               "corrupt object",
}

// StorageError is the error every backend returns for a storage condition.
// The REST layer maps Code to the metav1.Status kube-apiserver would give;
// among them:
//
//	ErrCodeExpired                   410 Expired
//	ErrCodeContinueExpired           410 Expired, Status.metadata.continue = [ContinueHint]
//	ErrCodeTooLargeResourceVersion   504 Timeout, cause ResourceVersionTooLarge
//	ErrCodeInvalidContinue           400 BadRequest
//	ErrCodeInvalidArgument           400 BadRequest
//	ErrCodeRequestTooLarge           413 RequestEntityTooLarge
type StorageError struct {
	Code            int
	Key             string
	ResourceVersion int64  // the revision involved, when there is one
	Message         string // extra detail (e.g. which precondition failed)
	Err             error  // underlying cause, if any
}

func (e *StorageError) Error() string {
	if e.Code == ErrCodeCorruptObj {
		// kube-apiserver's words (k8s.io/apiserver storage.StorageError
		// with etcd3's corruptObjectError), which clients see.
		return fmt.Sprintf("StorageError: %s, Code: %d, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: %s revision=%d: %v",
			codeNames[e.Code], upstreamCorruptObjCode, e.Key, e.Message, e.ResourceVersion, e.Err)
	}
	msg := fmt.Sprintf("StorageError: %s, Key: %s, ResourceVersion: %d", codeNames[e.Code], e.Key, e.ResourceVersion)
	if e.Message != "" {
		msg += ", AdditionalErrorMsg: " + e.Message
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *StorageError) Unwrap() error { return e.Err }

// NewCorruptObjError returns the error of a get whose stored object (key,
// revision rev) cannot be decoded: err.
func NewCorruptObjError(key string, rev int64, err error) *StorageError {
	return &StorageError{Code: ErrCodeCorruptObj, Key: key, ResourceVersion: rev, Message: "object not decodable", Err: err}
}

// CorruptOnGet returns err, the error of decoding the object a get read,
// as a corrupt-object error when the object could not be decoded
// (ErrCodeInvalidObj with Message "decode", which the backends' decoders
// return), unchanged otherwise.
func CorruptOnGet(err error) error {
	var se *StorageError
	if errors.As(err, &se) && se.Code == ErrCodeInvalidObj && se.Message == "decode" {
		return NewCorruptObjError(se.Key, se.ResourceVersion, se.Err)
	}
	return err
}

// IsCorruptObj reports whether err means a stored object could not be
// decoded.
func IsCorruptObj(err error) bool { return HasCode(err, ErrCodeCorruptObj) }

// NewError returns a *StorageError with code for key.
func NewError(code int, key string, rv int64, msg string) *StorageError {
	return &StorageError{Code: code, Key: key, ResourceVersion: rv, Message: msg}
}

// HasCode reports whether err is (or wraps) a *StorageError with code.
func HasCode(err error, code int) bool {
	var se *StorageError
	return errors.As(err, &se) && se.Code == code
}

// IsNotFound reports whether err means the key does not exist.
func IsNotFound(err error) bool { return HasCode(err, ErrCodeKeyNotFound) }

// IsExists reports whether err means the key already exists.
func IsExists(err error) bool { return HasCode(err, ErrCodeKeyExists) }

// IsConflict reports whether err is a resourceVersion or precondition conflict.
func IsConflict(err error) bool { return HasCode(err, ErrCodeResourceVersionConflicts) }

// IsExpired reports whether err means the requested revision was compacted.
func IsExpired(err error) bool {
	return HasCode(err, ErrCodeExpired) || HasCode(err, ErrCodeContinueExpired)
}

// IsTooLargeResourceVersion reports whether err means the requested revision
// is newer than what the backend has.
func IsTooLargeResourceVersion(err error) bool { return HasCode(err, ErrCodeTooLargeResourceVersion) }

// IsInvalidObj reports whether err means an object could not be
// encoded/decoded or failed validation inside storage.
func IsInvalidObj(err error) bool { return HasCode(err, ErrCodeInvalidObj) }

// IsInvalidArgument reports whether err means the request's options were
// malformed (400 BadRequest at the REST edge).
func IsInvalidArgument(err error) bool { return HasCode(err, ErrCodeInvalidArgument) }

// ContinueExpiredError is the cause (StorageError.Err) of an
// ErrCodeContinueExpired error. Continue is a fresh continue token that
// resumes the list where the expired token would have, but at the latest
// revision (its encoded revision is -1), so the rest of the list may be
// inconsistent with the pages already read.
//
// kube-apiserver's etcd3 store answers a compacted continue token with a 410
// Expired metav1.Status whose message says the list would be inconsistent
// and whose metadata.continue (Status.ListMeta.Continue) carries this token
// (k8s.io/apiserver storage/etcd3 handleCompactedErrorForPaging); the REST
// edge copies [ContinueHint] there.
type ContinueExpiredError struct {
	Continue string
}

func (e *ContinueExpiredError) Error() string {
	return "continue token expired; resume inconsistently with continue=" + e.Continue
}

// Messages of kube-apiserver for an expired continue token, with and without
// a fresh token to resume with.
const (
	MsgContinueExpiredWithToken = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter, or use the continue token in this response to " +
		"retrieve the remainder of the results. Continuing with the provided " +
		"token results in an inconsistent list - objects that were created, " +
		"modified, or deleted between the time the first chunk was returned " +
		"and now may show up in the list."
	MsgContinueExpired = "The provided continue parameter is too old " +
		"to display a consistent list result. You can start a new list without " +
		"the continue parameter."
)

// NewContinueExpiredError returns the ErrCodeContinueExpired error for key:
// with a fresh token (non-empty next) it carries a *[ContinueExpiredError]
// and kube's message inviting the client to use it.
func NewContinueExpiredError(key, next string) *StorageError {
	if next == "" {
		return NewError(ErrCodeContinueExpired, key, 0, MsgContinueExpired)
	}
	return &StorageError{Code: ErrCodeContinueExpired, Key: key, Message: MsgContinueExpiredWithToken,
		Err: &ContinueExpiredError{Continue: next}}
}

// ContinueHint returns the fresh continue token carried by an
// ErrCodeContinueExpired error, if any.
func ContinueHint(err error) (string, bool) {
	var ce *ContinueExpiredError
	if errors.As(err, &ce) && ce.Continue != "" {
		return ce.Continue, true
	}
	return "", false
}
