package memory

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// Store is the [storage.Interface] of one resource on a [Backend].
type Store struct {
	b           *Backend
	owned       bool // b was created by New and is closed by Close
	codec       runtime.Codec
	newFunc     func() runtime.Object
	newListFunc func() runtime.Object
	metrics     *storagemetrics.Resource // nil: none
	untrack     func()                   // stops the object count
	cacheTokens bool                     // Config.CacheContinueTokens
	resource    schema.GroupResource     // Config.GroupResource, named by list read errors
}

var _ storage.Interface = (*Store)(nil)

// New returns the store of one resource. With cfg.Backend nil it creates a
// private Backend (from cfg.BackendConfig) that Close closes.
func New(cfg Config) *Store {
	b, owned := cfg.Backend, false
	if b == nil {
		b, owned = NewBackend(cfg.BackendConfig), true
	}
	s := b.Store(cfg)
	s.owned = owned
	return s
}

// Store returns the store of one resource on b (cfg.Backend and
// cfg.BackendConfig are ignored). Its Close only stops its object count:
// close b instead.
func (b *Backend) Store(cfg Config) *Store {
	s := &Store{b: b, codec: cfg.Codec, newFunc: cfg.NewFunc, newListFunc: cfg.NewListFunc, untrack: func() {}, cacheTokens: cfg.CacheContinueTokens,
		resource: cfg.GroupResource}
	if cfg.GroupResource.Resource != "" && cfg.ResourcePrefix != "" && !cfg.NoMetrics {
		s.metrics = b.cfg.Metrics.ResourceIn(cfg.GroupResource, storagemetrics.StorageMemory)
		prefix := cfg.ResourcePrefix
		s.untrack = s.metrics.TrackObjects(func(ctx context.Context) (int64, error) { return s.Count(ctx, prefix) })
	}
	return s
}

// Backend returns the backend the store lives on.
func (s *Store) Backend() *Backend { return s.b }

// Close stops the store's object count and closes its backend if New
// created it for this store.
func (s *Store) Close() error {
	s.untrack()
	if s.owned {
		return s.b.Close()
	}
	return nil
}

// Count returns the number of objects stored under key (recursively).
func (s *Store) Count(ctx context.Context, key string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("count %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return 0, err
	}
	prefix := key
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	return s.b.count(key, prefix)
}

// CurrentRevision implements [storage.Interface].
func (s *Store) CurrentRevision(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("current revision: %w", err)
	}
	return s.b.Revision(), nil
}

// Create implements [storage.Interface].
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("create %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return err
	}
	if rv, err := storage.ObjectResourceVersion(obj); err != nil || rv != 0 {
		msg := "resourceVersion should not be set on objects to be created"
		if err != nil {
			msg = err.Error()
		}
		return storage.NewError(storage.ErrCodeInvalidObj, key, 0, msg)
	}
	data, err := s.encode(key, obj)
	if err != nil {
		return err
	}
	if out == nil {
		_, _, _, ok, err := s.b.compareAndPut(key, 0, data)
		if err != nil {
			return err
		}
		if !ok {
			return storage.NewError(storage.ErrCodeKeyExists, key, 0, "")
		}
		return nil
	}
	return s.putAndDecode(key, 0, data, out, func(kv, bool) error {
		return storage.NewError(storage.ErrCodeKeyExists, key, 0, "")
	})
}

// putAndDecode writes data at key if the key's modification revision is
// expect (see compareAndPut) and decodes what it wrote into out; on a
// mismatch it returns lost's error. The watchers of the write are woken
// once out is decoded, with a copy of it as the event's decoded object
// (seed): they copy it instead of decoding the same bytes again.
func (s *Store) putAndDecode(key string, expect uint64, data []byte, out runtime.Object, lost func(cur kv, exists bool) error) error {
	var held heldWatchers
	held.ws = held.buf[:0]
	rev, ev, cur, exists, ok, err := s.b.compareAndPutHeld(key, expect, data, &held)
	defer held.wake()
	if err != nil {
		return err
	}
	if !ok {
		return lost(cur, exists)
	}
	if err := s.decode(key, data, out, rev); err != nil {
		return err
	}
	if held.include(s) {
		s.seed(ev, out.DeepCopyObject())
	}
	return nil
}

// Get implements [storage.Interface].
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("get %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return err
	}
	minRV, err := storage.ParseRequestResourceVersion(key, opts.ResourceVersion)
	if err != nil {
		return err
	}
	if minRV > 0 {
		if err := s.b.waitForRevision(ctx, key, minRV); err != nil {
			return err
		}
	}
	cur, ok, err := s.b.get(key)
	if err != nil {
		return err
	}
	if !ok {
		if opts.IgnoreNotFound {
			return runtime.SetZeroValue(objPtr)
		}
		return storage.NewError(storage.ErrCodeKeyNotFound, key, 0, "")
	}
	return storage.CorruptOnGet(s.decode(key, cur.data, objPtr, cur.rev))
}

// objState is an object as read (or guessed from a cached object) during an
// update or delete.
type objState struct {
	obj    runtime.Object
	rev    uint64 // modification revision; 0 if the key does not exist
	data   []byte
	exists bool
}

func (s *Store) currentState(key string, like runtime.Object, ignoreNotFound bool) (*objState, error) {
	cur, ok, err := s.b.get(key)
	if err != nil {
		return nil, err
	}
	return s.stateFrom(key, like, cur, ok, ignoreNotFound)
}

func (s *Store) stateFrom(key string, like runtime.Object, cur kv, exists, ignoreNotFound bool) (*objState, error) {
	obj := newLike(like)
	if !exists {
		if !ignoreNotFound {
			return nil, storage.NewError(storage.ErrCodeKeyNotFound, key, 0, "")
		}
		return &objState{obj: obj}, nil
	}
	if err := s.decode(key, cur.data, obj, cur.rev); err != nil {
		return nil, err
	}
	return &objState{obj: obj, rev: cur.rev, data: cur.data, exists: true}, nil
}

// cachedState builds a state from a caller's guess of the current object.
func (s *Store) cachedState(key string, cached runtime.Object) (*objState, error) {
	obj := cached.DeepCopyObject()
	rev, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		return nil, storage.NewError(storage.ErrCodeInvalidObj, key, 0, err.Error())
	}
	data, err := s.encode(key, obj)
	if err != nil {
		return nil, err
	}
	return &objState{obj: obj, rev: rev, data: data, exists: true}, nil
}

// GuaranteedUpdate implements [storage.Interface].
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("update %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return err
	}
	r, err := s.startState(key, destination, ignoreNotFound, cachedExistingObject)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("update %q: %w", key, err)
		}
		if err := checkPreconditions(key, preconditions, r.st.obj); err != nil {
			if retry, err := r.retryAfter(err); !retry {
				return err
			}
			continue
		}
		out, err := tryUpdate(r.st.obj)
		if err != nil {
			if retry, err := r.retryAfter(err); !retry {
				return err
			}
			continue
		}
		data, err := s.encode(key, out)
		if err != nil {
			return err
		}
		if r.st.exists && bytes.Equal(data, r.st.data) {
			// Unchanged: write nothing, answer the stored object.
			if !r.current {
				if err := r.refresh(); err != nil {
					return err
				}
				if !r.st.exists || !bytes.Equal(data, r.st.data) {
					continue
				}
			}
			return s.decode(key, r.st.data, destination, r.st.rev)
		}
		retry := false
		err = s.putAndDecode(key, r.st.rev, data, destination, func(cur kv, exists bool) error {
			retry = true
			return r.lost(cur, exists)
		})
		if retry && err == nil {
			continue
		}
		return err
	}
}

// Delete implements [storage.Interface].
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return err
	}
	r, err := s.startState(key, out, false, cachedExistingObject)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("delete %q: %w", key, err)
		}
		check := checkPreconditions(key, preconditions, r.st.obj)
		if check == nil && validateDeletion != nil {
			check = validateDeletion(ctx, r.st.obj)
		}
		if check != nil {
			if retry, err := r.retryAfter(check); !retry {
				return err
			}
			continue
		}
		rev, cur, exists, ok, err := s.b.compareAndDelete(key, r.st.rev)
		if err != nil {
			return err
		}
		if !ok {
			if err := r.lost(cur, exists); err != nil {
				return err
			}
			continue
		}
		// As kube's etcd3 store: the deleted object carries the revision of
		// its deletion.
		return s.decode(key, r.st.data, out, rev)
	}
}

// retryState is the object state an update or delete works from: the
// caller's cached object (a guess) until storage is read.
type retryState struct {
	s              *Store
	key            string
	into           runtime.Object
	ignoreNotFound bool
	st             *objState
	current        bool // st was read from storage, not guessed
}

func (s *Store) startState(key string, into runtime.Object, ignoreNotFound bool, cached runtime.Object) (*retryState, error) {
	r := &retryState{s: s, key: key, into: into, ignoreNotFound: ignoreNotFound}
	if cached == nil {
		return r, r.refresh()
	}
	st, err := s.cachedState(key, cached)
	if err != nil {
		return nil, err
	}
	r.st = st
	return r, nil
}

// refresh reads the current state from storage.
func (r *retryState) refresh() error {
	st, err := r.s.currentState(r.key, r.into, r.ignoreNotFound)
	if err != nil {
		return err
	}
	r.st, r.current = st, true
	return nil
}

// retryAfter handles err, a check that failed against the state: against
// the stored state err stands; against a guess, storage is read and the
// caller retries unless the guess was right (then err stands too).
func (r *retryState) retryAfter(err error) (bool, error) {
	if r.current {
		return false, err
	}
	guessed := r.st.rev
	if err := r.refresh(); err != nil {
		return false, err
	}
	if r.st.rev == guessed {
		return false, err
	}
	return true, nil
}

// lost takes the state a failed compare-and-swap found.
func (r *retryState) lost(cur kv, exists bool) error {
	st, err := r.s.stateFrom(r.key, r.into, cur, exists, r.ignoreNotFound)
	if err != nil {
		return err
	}
	r.st, r.current = st, true
	return nil
}

func checkPreconditions(key string, p *storage.Preconditions, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return storage.NewError(storage.ErrCodeInvalidObj, key, 0, err.Error())
	}
	if p.UID != nil && *p.UID != m.GetUID() {
		return storage.NewError(storage.ErrCodeResourceVersionConflicts, key, 0,
			fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, m.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != m.GetResourceVersion() {
		return storage.NewError(storage.ErrCodeResourceVersionConflicts, key, 0,
			fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
				*p.ResourceVersion, m.GetResourceVersion()))
	}
	return nil
}

// encode encodes obj for storage, without its resourceVersion (which is
// restored on obj afterwards), and enforces the size limit.
func (s *Store) encode(key string, obj runtime.Object) ([]byte, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, storage.NewError(storage.ErrCodeInvalidObj, key, 0, err.Error())
	}
	if rv := m.GetResourceVersion(); rv != "" {
		m.SetResourceVersion("")
		defer m.SetResourceVersion(rv)
	}
	var buf bytes.Buffer
	if err := s.codec.Encode(obj, &buf); err != nil {
		return nil, &storage.StorageError{Code: storage.ErrCodeInvalidObj, Key: key, Message: "encode", Err: err}
	}
	if limit := s.b.cfg.MaxObjectSize; buf.Len() > limit {
		return nil, storage.NewError(storage.ErrCodeRequestTooLarge, key, 0,
			fmt.Sprintf("request is too large: object is %d bytes, the limit is %d bytes", buf.Len(), limit))
	}
	return buf.Bytes(), nil
}

// decode decodes data into into (reset first) and sets its resourceVersion.
func (s *Store) decode(key string, data []byte, into runtime.Object, rev uint64) error {
	if err := runtime.SetZeroValue(into); err != nil {
		return fmt.Errorf("decode %q: %w", key, err)
	}
	if _, _, err := s.codec.Decode(data, nil, into); err != nil {
		return &storage.StorageError{Code: storage.ErrCodeInvalidObj, Key: key, ResourceVersion: int64(rev), Message: "decode", Err: err}
	}
	if err := storage.SetObjectResourceVersion(into, rev); err != nil {
		return &storage.StorageError{Code: storage.ErrCodeInvalidObj, Key: key, ResourceVersion: int64(rev), Message: "set resourceVersion", Err: err}
	}
	return nil
}

// newLike returns a new empty object of like's type.
func newLike(like runtime.Object) runtime.Object {
	if u, ok := like.(runtime.Unstructured); ok {
		return u.NewEmptyInstance()
	}
	return reflect.New(reflect.TypeOf(like).Elem()).Interface().(runtime.Object)
}

// checkKey rejects keys that are empty or not clean paths (".", "..").
func checkKey(key string) error {
	if key == "" || key == "/" {
		return fmt.Errorf("empty key %q", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == "." || part == ".." {
			return fmt.Errorf("invalid key %q", key)
		}
	}
	return nil
}

// DeleteCorrupt implements [storage.CorruptDeleter]: a missing key is not
// found, a decodable object is refused, an undecodable one is deleted if
// still at the revision read (else read again). This backend has no
// prefix: the key is named as it is.
func (s *Store) DeleteCorrupt(ctx context.Context, key string, dryRun bool) error {
	if err := checkKey(key); err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("delete %q: %w", key, err)
		}
		cur, ok, err := s.b.get(key)
		if err != nil {
			return err
		}
		if !ok {
			return storage.NewError(storage.ErrCodeKeyNotFound, key, 0, "")
		}
		if err := s.decode(key, cur.data, s.newFunc(), cur.rev); err == nil {
			return &storage.DecodableError{Key: key}
		}
		if dryRun {
			return nil
		}
		_, _, _, deleted, err := s.b.compareAndDelete(key, cur.rev)
		if err != nil {
			return err
		}
		if deleted {
			return nil
		}
	}
}
