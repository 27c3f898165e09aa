package generic

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// guard runs fn, a step of the strategy or of admission on the object a
// request sent (preparation, validation, canonicalization), and turns a
// panic in it into a 400 BadRequest: such a panic is the object's doing
// (a value the code meets but cannot handle), and the client must get an
// answer rather than a reset connection. The panic is logged with its
// stack, as it also points at a missing check. http.ErrAbortHandler is
// passed on.
func (e *Store) guard(what string, fn func() error) (err error) {
	defer func() {
		p := recover()
		if p == nil {
			return
		}
		if p == http.ErrAbortHandler {
			panic(p)
		}
		logger := e.Logger
		if logger == nil {
			logger = slog.Default()
		}
		logger.Error("panic on request input", "step", what, "resource", e.DefaultQualifiedResource.String(),
			"panic", p, "stack", string(debug.Stack()))
		err = apierrors.NewBadRequest(fmt.Sprintf("%s: the object could not be processed: %v", what, p))
	}()
	return fn()
}
