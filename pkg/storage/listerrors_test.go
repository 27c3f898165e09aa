package storage

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func decodeErr(key string, rev int64) error {
	return &StorageError{Code: ErrCodeInvalidObj, Key: key, ResourceVersion: rev, Message: "decode", Err: errors.New("boom")}
}

// The cap and the causes of k8s.io/apiserver storage/etcd3
// corruptObjErrAggregator and aggregatedStorageError.NewAPIStatusError:
// the 100th corrupt object stops the list, with a TooMany cause; an
// error that is not a corrupt object stops it too, and is the answer when
// no object was corrupt, or a last cause otherwise.
func TestListReadErrors(t *testing.T) {
	gr := schema.GroupResource{Group: "example.com", Resource: "gizmos"}
	var a ListReadErrors
	if a.Any() || a.Err(gr) != nil {
		t.Fatal("empty aggregator reports an error")
	}
	for i := range 100 {
		stop := a.Add(fmt.Sprintf("/registry/k%03d", i), decodeErr("/k", int64(i+1)))
		if stop != (i == 99) {
			t.Fatalf("Add #%d returned stop=%v", i+1, stop)
		}
	}
	st := a.Err(gr).(*apierrors.StatusError).ErrStatus
	causes := st.Details.Causes
	if len(causes) != 101 || causes[100] != (metav1.StatusCause{Type: metav1.CauseTypeTooMany, Message: "too many errors, the list is truncated"}) {
		t.Fatalf("got %d causes, last %+v; want 100 and a TooMany", len(causes), causes[len(causes)-1])
	}
	first := "StorageError: corrupt object, Code: 7, Key: /registry/k000, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=1: boom"
	if causes[0].Field != "/registry/k000" || causes[0].Message != first {
		t.Errorf("first cause %+v", causes[0])
	}
	if want := "failed to read one or more gizmos.example.com from the storage: " + first + " (and 99 more)"; st.Message != want {
		t.Errorf("message %q, want %q", st.Message, want)
	}
	if st.Details.Group != "example.com" || st.Details.Kind != "gizmos" || st.Details.Name != "list" || st.Code != 500 || st.Reason != metav1.StatusReasonStoreReadError {
		t.Errorf("status %+v", st)
	}

	other := errors.New("etcd is gone")
	var b ListReadErrors
	if !b.Add("/registry/x", other) || b.Err(gr) != other {
		t.Errorf("a non-corrupt error alone: got %v, want it as is", b.Err(gr))
	}
	var c ListReadErrors
	c.Add("/registry/a", decodeErr("/a", 5))
	if !c.Add("/registry/b", other) {
		t.Error("a non-corrupt error did not stop the list")
	}
	cs := c.Err(gr).(*apierrors.StatusError).ErrStatus.Details.Causes
	if len(cs) != 2 || cs[1] != (metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Message: "etcd is gone"}) {
		t.Errorf("causes %+v, want the corrupt object and the abort", cs)
	}
}
