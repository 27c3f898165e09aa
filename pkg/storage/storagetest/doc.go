// Package storagetest is the conformance suite every [storage.Interface]
// backend runs (memory, etcd3 on embedded etcd, etcd3 behind the cacher), so
// the backends cannot drift from each other or from etcd's semantics.
//
// A backend's test calls:
//
//	func TestConformance(t *testing.T) {
//		storagetest.RunSuite(t, func(t *testing.T) storagetest.Backend {
//			return newMyBackend(t) // fresh, empty; closed via t.Cleanup
//		})
//	}
//
// RunSuite calls the factory once per case (each case is a t.Run subtest,
// so `go test -run 'TestConformance/Watch'` picks out cases). The factory
// must return an empty backend (no keys under the resource prefixes the
// suite asks for) and register its own cleanup with t.Cleanup. Cases run one
// after another (never in parallel), so a factory may share one server
// between cases, e.g. one etcd with a fresh key prefix per Backend; the suite
// never assumes revisions start at 1.
//
// The suite stores real kube types with a real codec: [PodResource]
// (*corev1.Pod under "/pods", fields metadata.name, metadata.namespace and
// spec.nodeName via [PodAttrs]) and [ConfigMapResource] (*corev1.ConfigMap
// under "/configmaps"), both with [Codec] (JSON, core/v1). The factory gets
// them through [Backend.Store].
//
// What the suite expects of a backend beyond [storage.Interface]:
//   - Errors are *storage.StorageError with the documented codes; malformed
//     options (resourceVersion not a revision, unknown resourceVersionMatch,
//     resourceVersion with a continue token) are ErrCodeInvalidArgument.
//   - Get with resourceVersion "0" eventually (not necessarily at once, for
//     a cache) sees an object just created.
//   - A watch that cannot start because its revision was compacted either
//     fails Watch with ErrCodeExpired or delivers one watch.Error event whose
//     object is a *metav1.Status with Code 410 and then closes.
//   - With ProgressNotify and Predicate.AllowWatchBookmarks, a BOOKMARK
//     event (an object from the resource's NewFunc with only
//     resourceVersion set) arrives within [BookmarkWait] of an idle watch;
//     configure short intervals in the factory.
//   - Get/GetList with a resourceVersion newer than the current revision
//     answer ErrCodeTooLargeResourceVersion within [TooLargeWait].
//   - Delete sets out to the deleted object with resourceVersion = the
//     revision of the delete (as kube's etcd3 store and the DELETED event do).
//   - An operation with an already-cancelled context fails and writes
//     nothing; cancelling a watch's context closes its result channel.
//   - Objects whose encoding exceeds 1.5 MiB (1572864 bytes) are rejected
//     with ErrCodeRequestTooLarge; objects just under it are stored.
//
// [RunBenchmarks] runs the storage benchmarks (create, get, update, a list
// of 10,000 objects, watch fan-out to 1 and 1,000 watchers) on a Backend
// from the same kind of factory, given a *testing.B:
//
//	func BenchmarkStorage(b *testing.B) {
//		storagetest.RunBenchmarks(b, func(b *testing.B) storagetest.Backend {
//			return newMyBackend(b)
//		})
//	}
package storagetest

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// Limits the suite waits for; a backend used with the suite must answer
// within them.
const (
	// BookmarkWait bounds the wait for a progress BOOKMARK on an idle watch.
	BookmarkWait = 5 * time.Second
	// TooLargeWait bounds the wait for ErrCodeTooLargeResourceVersion.
	TooLargeWait = 5 * time.Second
	// MaxObjectSize is the encoded size limit the suite checks (etcd's
	// default request size, 1.5 MiB).
	MaxObjectSize = 3 * 1024 * 1024 / 2
)

// Resource describes one resource the suite stores. The suite builds it
// (with a real codec and real k8s types); the backend uses it to build a
// store.
type Resource struct {
	// Prefix is the key prefix of the resource, e.g. "/pods"; the suite's keys
	// are Prefix + "/" + namespace + "/" + name, and recursive lists and
	// watches use Prefix or Prefix + "/" + namespace. A cacher starts its
	// one underlying watch on Prefix.
	Prefix string
	// Codec encodes and decodes the objects (JSON, from a real scheme).
	Codec runtime.Codec
	// NewFunc returns an empty object (e.g. &corev1.Pod{}); NewListFunc an
	// empty list (e.g. &corev1.PodList{}).
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object
	// GetAttrs returns labels and fields of an object for predicates (the
	// suite also sets it on each SelectionPredicate it passes).
	GetAttrs storage.AttrFunc
}

// Backend is one fresh backend under test (or benchmark, see
// [RunBenchmarks]). Every store it returns shares one global revision.
type Backend interface {
	// Store returns the storage.Interface of resource r. It may be called
	// several times with different resources; calling it twice with the same
	// Prefix may return the same store.
	// t is the test (or benchmark) that owns the backend.
	Store(t testing.TB, r Resource) storage.Interface
	// Compact compacts the backend's history at rev: afterwards the state at
	// any revision < rev is gone (Exact lists, continue tokens and watches
	// that need it answer 410), while rev and newer stay readable, as etcd's
	// Compact(rev). It returns when every store of the backend answers 410
	// for the compacted revisions.
	Compact(ctx context.Context, t testing.TB, rev uint64)
}

// Skipper may be implemented by a Backend to skip suite cases that do not
// apply to it, with the reason. name is the subtest name below RunSuite,
// e.g. "Watch/ResumeFromEveryRevision". Return "" to run the case.
type Skipper interface {
	SkipCase(name string) (reason string)
}

// CacheTokens is implemented by a Backend whose lists' pages carry continue
// tokens in kube-apiserver's watch cache form (start "/name\u0000" for a
// list of "/pods/ns"), a watch cache's; without it, the suite wants its
// etcd3 store's ("name\u0000"). See storage.ContinuePrefix.
type CacheTokens interface {
	CacheFormTokens() bool
}

// Factory returns a fresh Backend for one suite case.
type Factory func(t *testing.T) Backend
