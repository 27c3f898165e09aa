package filters

import (
	"net/http"
	"strings"
)

// A request's goroutines start with a small stack (the runtime's average
// of the stacks it scanned at the last GC, mostly idle watch and informer
// goroutines) and the serving path of a GET or an update needs several
// times that: each time a call finds the stack too small, the runtime
// allocates one twice as large and copies the stack, walking and
// adjusting every frame of the (by then deep) stack. That was ~12% of
// kapi's CPU per GET at c=32 (runtime.newstack/copystack under the
// filters, the handler and encoding/json), at several places per request.
//
// The runtime grows a stack to fit the frame that needs it, in one step:
// calling a function with a large frame while the stack is still shallow
// (the copy then walks few frames) takes the stack to the size the rest
// of the request needs at once. Two goroutines serve a request: the
// connection's (HTTP/2: one per stream), which runs the filters down to
// the timeout filter, and the timeout filter's, which runs the rest and
// the handler. The stacks shrink back at a later GC if they are not used
// (the runtime's rule). Watches, which live long, are left alone.

// outerStackBytes is the frame grown at the top of the filter chain: the
// filters down to the timeout filter fit in 16 KiB with it.
const outerStackBytes = 8 << 10

// handlerStackBytes is the frame grown at the start of the timeout
// filter's goroutine: a GET or an update of a custom resource fits in
// 32 KiB with it.
const handlerStackBytes = 16 << 10

// withServingStack grows the serving goroutine's stack for the filters,
// except for what looks like a watch (a guess from the URL: the filter
// runs before the request is parsed; a wrong guess costs only time or
// memory).
func withServingStack(handler http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.RawQuery, "watch") && !strings.Contains(r.URL.Path, "/watch/") {
			growOuterStack()
		}
		handler.ServeHTTP(w, r)
	})
}

// growOuterStack grows the calling goroutine's stack to fit
// outerStackBytes more than it uses now.
//
//go:noinline
func growOuterStack() {
	var buf [outerStackBytes]byte
	touchStack(buf[:])
}

// growStack grows the calling goroutine's stack to fit handlerStackBytes
// more than it uses now.
//
//go:noinline
func growStack() {
	var buf [handlerStackBytes]byte
	touchStack(buf[:])
}

// touchStack keeps buf (and so its caller's frame) from being optimized
// away.
//
//go:noinline
func touchStack(buf []byte) { buf[0] = 0 }
