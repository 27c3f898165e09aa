package memory

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
	"github.com/kapi-dev/kapi/pkg/storage/cacheable"
)

// msgListExpired is kube-apiserver's message for a list at a compacted
// revision.
const msgListExpired = "The resourceVersion for the provided list is too old."

// GetList implements [storage.Interface].
func (s *Store) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("list %q: %w", key, err)
	}
	if err := checkKey(key); err != nil {
		return err
	}
	if _, err := meta.ListAccessor(listObj); err != nil {
		return fmt.Errorf("list %q: %w", key, err)
	}
	prefix := key
	if opts.Recursive && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	minRV, err := storage.ValidateListOptions(key, opts)
	if err != nil {
		return err
	}

	pred := opts.Predicate
	from := prefix // first key of the range
	var readRev uint64
	continuing := false
	switch {
	case opts.Recursive && pred.Continue != "":
		// ValidateListOptions refused a resourceVersion with a continue.
		k, rv, err := storage.DecodeContinue(pred.Continue, prefix)
		if err != nil {
			return &storage.StorageError{Code: storage.ErrCodeInvalidContinue, Key: key, Message: err.Error(), Err: err}
		}
		from, continuing = k, true
		if rv > 0 {
			readRev = uint64(rv)
		}
	case minRV > 0:
		switch opts.ResourceVersionMatch {
		case metav1.ResourceVersionMatchNotOlderThan:
		case metav1.ResourceVersionMatchExact:
			readRev = minRV
		case "":
			// Legacy: a paginated list with a resourceVersion is exact.
			if opts.Recursive && pred.Limit > 0 {
				readRev = minRV
			}
		}
	}
	if need := max(minRV, readRev); need > 0 {
		if err := s.b.waitForRevision(ctx, key, need); err != nil {
			return err
		}
	}

	// A page of a list that selects everything needs only its own states
	// and the number of the others (remainingItemCount); a selective one
	// reads every state after its start, as it cannot tell which match.
	readLimit := -1
	if pred.Limit > 0 && pred.Empty() {
		readLimit = int(pred.Limit)
	}
	kvs, beyond, rev, err := s.b.list(key, prefix, from, opts.Recursive, readRev, readLimit)
	if err != nil {
		var se *storage.StorageError
		if continuing && errors.As(err, &se) && se.Code == storage.ErrCodeExpired {
			return s.continueExpired(key, from, prefix)
		}
		return err
	}

	newItem := s.newItemFunc(listObj)
	typ := reflect.TypeOf(newItem())
	size := len(kvs)
	if pred.Limit > 0 {
		size = min(size, int(pred.Limit))
	}
	// Each state is decoded once and kept for later lists (listedObject).
	// A reader that asks for shared items (the API handler, through
	// cacheable.WithItems) gets the kept objects themselves, to encode once
	// and write; others get deep copies, theirs to change.
	sink := cacheable.ItemsWanted(ctx)
	var items []runtime.Object
	var shared []*cacheable.Object
	if sink != nil {
		shared = make([]*cacheable.Object, 0, size)
	} else {
		items = make([]runtime.Object, 0, size)
	}
	examined, matched := 0, 0
	// What serving the LIST cost, recorded on errors too (as upstream's
	// storage does): every state read is tested, so fetched = evaluated.
	defer func() { s.metrics.StorageList(examined, examined, matched) }()
	hasMore := false
	var lastKey string
	var readErrs storage.ListReadErrors
	for _, e := range kvs {
		if pred.Limit > 0 && int64(matched) >= pred.Limit {
			hasMore = true
			break
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("list %q: %w", key, err)
		}
		examined++
		lastKey = e.key
		so, err := s.listedObject(e, typ, newItem)
		if err != nil {
			// As upstream's etcd3 store, a corrupt object does not end
			// the list: every one met is reported. The key is the
			// storage key (this backend has no etcd prefix).
			if readErrs.Add(e.key, err) {
				return readErrs.Err(s.resource)
			}
			continue
		}
		ok, err := pred.Matches(so.obj)
		if err != nil {
			return fmt.Errorf("list %q: match %q: %w", key, e.key, err)
		}
		if !ok {
			continue
		}
		matched++
		if sink != nil {
			shared = append(shared, so.wrapped)
		} else {
			items = append(items, so.obj.DeepCopyObject())
		}
	}
	if err := readErrs.Err(s.resource); err != nil {
		return err
	}
	if beyond > 0 {
		hasMore = true // states were left unread (readLimit)
	}
	if sink != nil {
		sink.Set(shared)
	}
	if err := meta.SetList(listObj, items); err != nil {
		return fmt.Errorf("list %q: %w", key, err)
	}
	var cont string
	var remaining *int64
	if hasMore {
		cont, err = storage.EncodeContinue(lastKey+"\x00", storage.ContinuePrefix(key, s.cacheTokens), int64(rev))
		if err != nil {
			return err
		}
		if pred.Empty() {
			n := int64(len(kvs)-examined) + beyond
			remaining = &n
		}
	}
	return storage.SetListResourceVersion(listObj, rev, cont, remaining)
}

// continueExpired is the 410 for a continue token whose revision was
// compacted, with a fresh token to resume at the latest revision.
func (s *Store) continueExpired(key, from, prefix string) error {
	tok, err := storage.EncodeContinue(from, prefix, -1)
	if err != nil {
		tok = "" // cannot happen: from came from a token under prefix
	}
	return storage.NewContinueExpiredError(key, tok)
}

// newItemFunc returns a constructor of listObj's items: the element type of
// its Items if that is a struct, else the resource's NewFunc.
func (s *Store) newItemFunc(listObj runtime.Object) func() runtime.Object {
	if _, ok := listObj.(*unstructured.UnstructuredList); ok {
		return func() runtime.Object { return &unstructured.Unstructured{} }
	}
	if ptr, err := meta.GetItemsPtr(listObj); err == nil {
		if t := reflect.TypeOf(ptr).Elem(); t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct {
			if _, ok := reflect.New(t.Elem()).Interface().(runtime.Object); ok {
				elem := t.Elem()
				return func() runtime.Object { return reflect.New(elem).Interface().(runtime.Object) }
			}
		}
	}
	return s.newFunc
}

// count returns the number of keys under prefix that exist now.
func (b *Backend) count(key, prefix string) (int64, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return 0, errClosed(key)
	}
	end := prefixEnd(prefix)
	var n int64
	b.keys.ascend(prefix, func(k string) bool {
		if k >= end {
			return false
		}
		if _, ok := b.latestLocked(k); ok {
			n++
		}
		return true
	})
	return n, nil
}

// list reads, at revision rev (0: current), the key alone or (recursive) the
// keys in [from, prefixEnd(prefix)), at most limit states of them (limit <
// 0: all). It returns the states, the number of states after them and the
// revision read at.
func (b *Backend) list(key, prefix, from string, recursive bool, rev uint64, limit int) ([]kv, int64, uint64, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.closed {
		return nil, 0, 0, errClosed(key)
	}
	if rev == 0 {
		rev = b.rev
	}
	if rev < b.compacted {
		return nil, 0, 0, storage.NewError(storage.ErrCodeExpired, key, int64(rev), msgListExpired)
	}
	if rev > b.rev {
		return nil, 0, 0, tooLargeRV(key, rev, b.rev)
	}
	if !recursive {
		if s, ok := b.atLocked(key, rev); ok {
			return []kv{s}, 0, rev, nil
		}
		return nil, 0, rev, nil
	}
	kvs, beyond := b.rangeLimitLocked(from, prefixEnd(prefix), rev, limit)
	return kvs, beyond, rev, nil
}
