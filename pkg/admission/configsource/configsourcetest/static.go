// Package configsourcetest has what tests of configsource users share: a
// ListWatcher of fixed objects, and running a source for a test's length.
package configsourcetest

import (
	"context"
	"testing"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/admission/configsource"
)

// Static lists fixed objects (a list object, e.g. a
// ValidatingWebhookConfigurationList, possibly one today's validation
// would refuse) and never sends a watch event; its watches end with
// their context.
type Static struct{ Objects runtime.Object }

var _ configsource.ListWatcher = Static{}

// List returns the fixed list.
func (s Static) List(context.Context, *metainternalversion.ListOptions) (runtime.Object, error) {
	return s.Objects, nil
}

// Watch returns a watch that sends nothing and stops when ctx ends.
func (s Static) Watch(ctx context.Context, _ *metainternalversion.ListOptions) (watch.Interface, error) {
	w := watch.NewFake()
	go func() { <-ctx.Done(); w.Stop() }()
	return w, nil
}

// Run runs run (a Source's or a plugin's Run) until the test ends, and
// waits for it to return then.
func Run(t testing.TB, run func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}
