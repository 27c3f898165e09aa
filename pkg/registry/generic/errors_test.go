package generic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
)

func TestInterpretStorageError(t *testing.T) {
	cm := schema.GroupResource{Resource: "configmaps"}
	dep := schema.GroupResource{Group: "apps", Resource: "deployments"}
	forbidden := apierrors.NewForbidden(cm, "x", errors.New("no"))
	cases := []struct {
		name         string
		err          error
		gr           schema.GroupResource
		code         int32
		reason       metav1.StatusReason
		msg          string
		retry        int32
		cause        metav1.CauseType
		wantContinue string
	}{
		{name: "not found", err: storage.NewError(storage.ErrCodeKeyNotFound, "/configmaps/ns/x", 0, ""), gr: cm,
			code: http.StatusNotFound, reason: metav1.StatusReasonNotFound, msg: `configmaps "x" not found`},
		{name: "not found in a group", err: storage.NewError(storage.ErrCodeKeyNotFound, "k", 0, ""), gr: dep,
			code: http.StatusNotFound, reason: metav1.StatusReasonNotFound, msg: `deployments.apps "x" not found`},
		{name: "wrapped", err: fmt.Errorf("read: %w", storage.NewError(storage.ErrCodeKeyNotFound, "k", 0, "")), gr: cm,
			code: http.StatusNotFound, reason: metav1.StatusReasonNotFound, msg: `configmaps "x" not found`},
		// A get of an object that cannot be decoded, even by an API error
		// (a failing conversion webhook): kube-apiserver's corrupt-object
		// 500, in its words.
		{name: "corrupt object", err: storage.CorruptOnGet(&storage.StorageError{Code: storage.ErrCodeInvalidObj, Key: "/g/things/ns/x", ResourceVersion: 42, Message: "decode", Err: forbidden}), gr: cm,
			code: http.StatusInternalServerError, reason: metav1.StatusReasonInternalError,
			msg: "Internal error occurred: StorageError: corrupt object, Code: 7, Key: /g/things/ns/x, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=42: " + forbidden.Error()},
		{name: "exists", err: storage.NewError(storage.ErrCodeKeyExists, "k", 0, ""), gr: cm,
			code: http.StatusConflict, reason: metav1.StatusReasonAlreadyExists, msg: `configmaps "x" already exists`},
		{name: "conflict", err: storage.NewError(storage.ErrCodeResourceVersionConflicts, "k", 0, ""), gr: cm,
			code: http.StatusConflict, reason: metav1.StatusReasonConflict,
			msg: `Operation cannot be fulfilled on configmaps "x": the object has been modified; please apply your changes to the latest version and try again`},
		{name: "precondition", err: storage.NewError(storage.ErrCodeResourceVersionConflicts, "k", 0, "Precondition failed: UID in precondition: a, UID in object meta: b"), gr: cm,
			code: http.StatusConflict, reason: metav1.StatusReasonConflict,
			msg: `Operation cannot be fulfilled on configmaps "x": Precondition failed: UID in precondition: a, UID in object meta: b`},
		{name: "expired watch", err: storage.NewError(storage.ErrCodeExpired, "k", 5, "too old resource version: 5 (10)"), gr: cm,
			code: http.StatusGone, reason: metav1.StatusReasonExpired, msg: "too old resource version: 5 (10)"},
		{name: "expired, etcd's words", err: &storage.StorageError{Code: storage.ErrCodeExpired, Message: "required revision has been compacted"}, gr: cm,
			code: http.StatusGone, reason: metav1.StatusReasonExpired, msg: "The resourceVersion for the provided list is too old."},
		{name: "continue expired with a token", err: storage.NewContinueExpiredError("k", "fresh"), gr: cm,
			code: http.StatusGone, reason: metav1.StatusReasonExpired, msg: storage.MsgContinueExpiredWithToken, wantContinue: "fresh"},
		{name: "continue expired", err: storage.NewContinueExpiredError("k", ""), gr: cm,
			code: http.StatusGone, reason: metav1.StatusReasonExpired, msg: storage.MsgContinueExpired},
		{name: "too large resource version", err: storage.NewError(storage.ErrCodeTooLargeResourceVersion, "k", 20, "Too large resource version: 20, current: 10"), gr: cm,
			code: http.StatusGatewayTimeout, reason: metav1.StatusReasonTimeout, msg: "Timeout: Too large resource version: 20, current: 10",
			retry: 1, cause: metav1.CauseTypeResourceVersionTooLarge},
		{name: "too large, etcd's words", err: &storage.StorageError{Code: storage.ErrCodeTooLargeResourceVersion, ResourceVersion: 20, Message: "required revision is a future revision"}, gr: cm,
			code: http.StatusGatewayTimeout, reason: metav1.StatusReasonTimeout, msg: "Timeout: Too large resource version: 20",
			retry: 1, cause: metav1.CauseTypeResourceVersionTooLarge},
		{name: "invalid continue", err: storage.NewError(storage.ErrCodeInvalidContinue, "k", 0, "continue key is not valid"), gr: cm,
			code: http.StatusBadRequest, reason: metav1.StatusReasonBadRequest, msg: "invalid continue token: continue key is not valid"},
		{name: "invalid argument", err: storage.NewError(storage.ErrCodeInvalidArgument, "k", 0, "specifying resource version is not allowed when using continue"), gr: cm,
			code: http.StatusBadRequest, reason: metav1.StatusReasonBadRequest, msg: "specifying resource version is not allowed when using continue"},
		{name: "request too large", err: storage.NewError(storage.ErrCodeRequestTooLarge, "k", 0, "request is too large"), gr: cm,
			code: http.StatusRequestEntityTooLarge, reason: metav1.StatusReasonRequestEntityTooLarge, msg: "Request entity too large: request is too large"},
		{name: "unreachable", err: storage.NewError(storage.ErrCodeUnreachable, "k", 0, ""), gr: cm,
			code: http.StatusInternalServerError, reason: metav1.StatusReasonServerTimeout,
			msg: "The storage operation against configmaps could not be completed at this time, please try again.", retry: 2},
		{name: "invalid object", err: storage.NewError(storage.ErrCodeInvalidObj, "k", 0, "decode"), gr: cm,
			code: http.StatusInternalServerError, reason: metav1.StatusReasonInternalError},
		{name: "api errors pass", err: forbidden, gr: cm,
			code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, msg: forbidden.ErrStatus.Message},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			se := wantStatus(t, InterpretStorageError(tc.err, tc.gr, "x"), tc.code, tc.reason, tc.msg)
			var retry int32
			var causes []metav1.StatusCause
			if d := se.ErrStatus.Details; d != nil {
				retry, causes = d.RetryAfterSeconds, d.Causes
			}
			if retry != tc.retry {
				t.Errorf("got retryAfterSeconds %d, want %d", retry, tc.retry)
			}
			if tc.cause != "" && (len(causes) != 1 || causes[0].Type != tc.cause || causes[0].Message != "Too large resource version") {
				t.Errorf("got causes %+v, want one %s", causes, tc.cause)
			}
			if se.ErrStatus.ListMeta.Continue != tc.wantContinue {
				t.Errorf("got continue %q, want %q", se.ErrStatus.ListMeta.Continue, tc.wantContinue)
			}
		})
	}
	t.Run("nil and non-storage errors", func(t *testing.T) {
		if err := InterpretStorageError(nil, cm, "x"); err != nil {
			t.Errorf("got %v, want nil", err)
		}
		if err := InterpretStorageError(context.Canceled, cm, "x"); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled unchanged", err)
		}
	})
}
