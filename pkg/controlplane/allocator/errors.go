package allocator

import (
	"errors"
	"fmt"
)

// ErrFull is returned when no value is left in the range.
var ErrFull = errors.New("range is full")

// ErrAllocated is returned when a requested value is taken. Its message is
// the one of kube's allocator for the kind of value (IP or port); test
// with errors.Is.
var ErrAllocated = errors.New("already allocated")

// allocatedError is ErrAllocated with kube's message for one kind.
type allocatedError struct{ msg string }

func (e *allocatedError) Error() string        { return e.msg }
func (e *allocatedError) Is(target error) bool { return target == ErrAllocated }

// ErrNotInRange is returned when a requested port is outside the range
// (ClusterIPs answer ErrMismatchedNetwork, as upstream's MetaAllocator).
type ErrNotInRange struct {
	// Value is the requested value; Kind "IP" or "port".
	Value string
	Kind  string
	// ValidRange describes the range, e.g. "10.0.0.0/24" or "30000-32767".
	ValidRange string
}

func (e *ErrNotInRange) Error() string {
	if e.Kind == "IP" {
		return fmt.Sprintf("the provided IP (%s) is not in the valid range. The range of valid IPs is %s", e.Value, e.ValidRange)
	}
	return fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", e.ValidRange)
}
