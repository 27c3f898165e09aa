package storage

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultAttrs returns an object's labels and its metadata.name and
// metadata.namespace fields.
func DefaultAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	return labels.Set(m.GetLabels()), fields.Set{
		"metadata.name":      m.GetName(),
		"metadata.namespace": m.GetNamespace(),
	}, nil
}

// ParseResourceVersion parses a resourceVersion; "" and "0" are 0.
func ParseResourceVersion(rv string) (uint64, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	v, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("invalid resource version %q", rv)
	}
	return v, nil
}

// ParseRequestResourceVersion parses the resourceVersion of a request's
// options (GetOptions, ListOptions) for key: "" and "0" are 0; anything
// else that is not a positive integer is an ErrCodeInvalidArgument error
// with kube-apiserver's message for lists (its versioner's field error
// wrapped by its stores: `invalid resource version: resourceVersion:
// Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid
// syntax`, k8s.io/apiserver storage APIObjectVersioner, v0.37.2).
// Upstream answers a GET or a watch with such a resourceVersion 500 with
// the field error alone; kapi answers 400 with this message for both
// (bad input is not a server error).
func ParseRequestResourceVersion(key, rv string) (uint64, error) {
	v, err := ParseResourceVersion(rv)
	if err != nil {
		detail := "must be a positive integer" // "00": upstream reads it as 0
		if _, perr := strconv.ParseUint(rv, 10, 64); perr != nil {
			detail = perr.Error()
		}
		return 0, &StorageError{Code: ErrCodeInvalidArgument, Key: key,
			Message: "invalid resource version: " + field.Invalid(field.NewPath("resourceVersion"), rv, detail).Error()}
	}
	return v, nil
}

// ValidateListOptions checks the options of a GetList on key as every
// backend does before reading, and returns the parsed resourceVersion. It
// fails with ErrCodeInvalidArgument for a malformed resourceVersion, an
// unknown resourceVersionMatch, and a resourceVersion other than "" or "0"
// together with a continue token (as kube-apiserver: "specifying resource
// version is not allowed when using continue"), after a malformed continue
// token in that case (ErrCodeInvalidContinue, as upstream). Otherwise the
// continue token is the backend's to decode.
func ValidateListOptions(key string, opts ListOptions) (uint64, error) {
	rv, err := ParseRequestResourceVersion(key, opts.ResourceVersion)
	if err != nil {
		return 0, err
	}
	switch opts.ResourceVersionMatch {
	case "", metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact:
	default:
		return 0, &StorageError{Code: ErrCodeInvalidArgument, Key: key,
			Message: fmt.Sprintf("unknown ResourceVersionMatch value: %q", opts.ResourceVersionMatch)}
	}
	if opts.Recursive && opts.Predicate.Continue != "" && rv != 0 {
		// kube-apiserver's stores decode the token first: a malformed
		// one is reported as such (the prefix plays no part in that).
		if _, _, err := DecodeContinue(opts.Predicate.Continue, ""); err != nil {
			return 0, &StorageError{Code: ErrCodeInvalidContinue, Key: key, Message: err.Error(), Err: err}
		}
		return 0, &StorageError{Code: ErrCodeInvalidArgument, Key: key, ResourceVersion: int64(rv),
			Message: "specifying resource version is not allowed when using continue"}
	}
	return rv, nil
}

// ObjectResourceVersion returns the resourceVersion of an object as a number.
func ObjectResourceVersion(obj runtime.Object) (uint64, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	return ParseResourceVersion(m.GetResourceVersion())
}

// SetObjectResourceVersion sets an object's resourceVersion (0 clears it).
func SetObjectResourceVersion(obj runtime.Object, rv uint64) error {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if rv == 0 {
		m.SetResourceVersion("")
	} else {
		m.SetResourceVersion(strconv.FormatUint(rv, 10))
	}
	return nil
}

// SetListResourceVersion sets a list's resourceVersion, continue token and
// remaining item count.
func SetListResourceVersion(list runtime.Object, rv uint64, cont string, remaining *int64) error {
	l, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	l.SetResourceVersion(strconv.FormatUint(rv, 10))
	l.SetContinue(cont)
	l.SetRemainingItemCount(remaining)
	return nil
}

// DeadlineBookmarkLead is how long before a watch's deadline its last
// bookmark is sent, as kube's watch cache does, so the client resumes from
// a fresh resourceVersion.
const DeadlineBookmarkLead = 2 * time.Second

// BookmarkBeforeDeadline calls queue on a timer's goroutine
// DeadlineBookmarkLead before ctx's deadline, and returns what cancels it.
// Nothing is called when bookmarks are not wanted, ctx has no deadline, or
// the deadline is too close. queue puts the bookmark behind the events
// the watch has queued, so that the watch's delivery can wait on its
// queue alone.
func BookmarkBeforeDeadline(ctx context.Context, wanted bool, queue func()) (stop func()) {
	deadline, ok := ctx.Deadline()
	if !wanted || !ok {
		return func() {}
	}
	d := time.Until(deadline) - DeadlineBookmarkLead
	if d <= 0 {
		return func() {}
	}
	t := time.AfterFunc(d, queue)
	return func() { t.Stop() }
}
