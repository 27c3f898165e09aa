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
)

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
}

// StorageError is the error every backend returns for a storage condition.
// The REST layer maps Code to the metav1.Status kube-apiserver would give.
type StorageError struct {
	Code            int
	Key             string
	ResourceVersion int64  // the revision involved, when there is one
	Message         string // extra detail (e.g. which precondition failed)
	Err             error  // underlying cause, if any
}

func (e *StorageError) Error() string {
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
