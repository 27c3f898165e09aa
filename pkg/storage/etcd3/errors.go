package etcd3

import (
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// interpretError turns an etcd client error into a *storage.StorageError
// where a code fits (compacted, future revision, too large, unreachable).
// Context errors are returned unchanged; anything else is wrapped with the
// key.
func interpretError(err error, key string) error {
	if err == nil {
		return nil
	}
	if errContext(err) {
		return err
	}
	var se *storage.StorageError
	if errors.As(err, &se) {
		return err
	}
	switch {
	case errors.Is(err, rpctypes.ErrCompacted):
		return &storage.StorageError{Code: storage.ErrCodeExpired, Key: key, Message: "required revision has been compacted", Err: err}
	case errors.Is(err, rpctypes.ErrFutureRev):
		return &storage.StorageError{Code: storage.ErrCodeTooLargeResourceVersion, Key: key, Message: "required revision is a future revision", Err: err}
	case errors.Is(err, rpctypes.ErrRequestTooLarge):
		return &storage.StorageError{Code: storage.ErrCodeRequestTooLarge, Key: key, Message: "request is too large for etcd", Err: err}
	case unreachable(err):
		return &storage.StorageError{Code: storage.ErrCodeUnreachable, Key: key, Err: err}
	}
	return fmt.Errorf("etcd request for %q: %w", key, err)
}

// unreachable reports whether err means etcd could not serve the request
// (no leader, no connection, timeout inside etcd).
func unreachable(err error) bool {
	if errors.Is(err, clientv3.ErrNoAvailableEndpoints) {
		return true
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable || ee.Code() == codes.DeadlineExceeded
	}
	if s, ok := status.FromError(err); ok {
		return s.Code() == codes.Unavailable
	}
	return false
}
