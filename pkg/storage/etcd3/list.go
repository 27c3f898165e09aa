package etcd3

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// maxPageSize caps the page size GetList grows to while a predicate filters
// items out (as kube's etcd3 store).
const maxPageSize = 10000

// GetList implements [storage.Interface].
func (s *Store) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	k, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	items, err := newListAppender(listObj, s.newFunc)
	if err != nil {
		return err
	}
	// A recursive list covers key + "/": "/pods/a" must not list "/pods/ab".
	if opts.Recursive && !strings.HasSuffix(k, "/") {
		k += "/"
	}
	keyPrefix := k
	fromRV, err := storage.ValidateListOptions(key, opts)
	if err != nil {
		return err
	}
	pred := opts.Predicate
	paging := pred.Limit > 0
	pageSize := pred.Limit // grows while a predicate filters items out

	var withRev int64 // the revision to read at; 0: the latest
	var continueKey string
	continuing := opts.Recursive && pred.Continue != ""
	switch {
	case continuing:
		var continueRV int64
		continueKey, continueRV, err = storage.DecodeContinue(pred.Continue, keyPrefix)
		if err != nil {
			return &storage.StorageError{Code: storage.ErrCodeInvalidContinue, Key: key, Message: err.Error(), Err: err}
		}
		// ValidateListOptions refused a resourceVersion with a continue.
		k = continueKey
		if continueRV > 0 {
			withRev = continueRV
		}
	case opts.ResourceVersion != "":
		switch opts.ResourceVersionMatch {
		case metav1.ResourceVersionMatchNotOlderThan:
			// Read the latest; checked against fromRV below.
		case metav1.ResourceVersionMatchExact:
			withRev = int64(fromRV)
		case "":
			// Legacy: a paged list from N reads exactly N.
			if opts.Recursive && paging && fromRV > 0 {
				withRev = int64(fromRV)
			}
		}
	}

	options := s.readOpts(make([]clientv3.OpOption, 0, 5)...)
	if opts.Recursive {
		options = append(options, clientv3.WithRange(clientv3.GetPrefixRangeEnd(keyPrefix)))
	}
	if paging {
		options = append(options, clientv3.WithLimit(pageSize))
	}
	if withRev != 0 {
		options = append(options, clientv3.WithRev(withRev))
	}

	var (
		lastKey []byte
		hasMore bool
		resp    *clientv3.GetResponse
	)
	// What serving the LIST cost, recorded on errors too (as upstream).
	var fetched, evaluated int
	var readErrs storage.ListReadErrors
	// Upstream streams (EtcdRangeStream) a recursive list unless it is a
	// page with selectors.
	streamed := opts.Recursive && (pred.Limit <= 0 || pred.Empty())
	listStart := time.Now()
	defer func() {
		s.metrics.StorageList(fetched, evaluated, items.len())
		s.metrics.ListLatency(streamed, listStart)
	}()
	// The etcd requests, under upstream's operation names: a list of one
	// key is a "get" per read; a streamed list (upstream reads it as one
	// range stream, which kapi reads as one range: the loop below ends
	// after one read when nothing filters) is one "listStream", timed
	// until its items are decoded, as upstream's stream is consumed while
	// it decodes; a page with selectors is a "list" per read.
	op := storagemetrics.OpGet
	if opts.Recursive {
		op = storagemetrics.OpList
	}
	var streamErr error // the streamed list's etcd error
	if streamed {
		defer func() { s.metrics.EtcdRequest(storagemetrics.OpListStream, listStart, streamErr) }()
	}
	for {
		start := time.Now()
		resp, err = s.client.Get(ctx, k, options...)
		if streamed {
			streamErr = err
		} else {
			s.metrics.EtcdRequest(op, start, err)
		}
		if err != nil {
			err = interpretError(err, key)
			if continuing && storage.HasCode(err, storage.ErrCodeExpired) {
				return continueExpired(key, continueKey, keyPrefix)
			}
			if withRev > 0 && storage.HasCode(err, storage.ErrCodeTooLargeResourceVersion) {
				// A read at a future revision (resourceVersionMatch=Exact):
				// name the revision asked for and the current one, as
				// upstream's etcd3 store does (0 when the current one
				// cannot be read).
				current, _ := s.CurrentRevision(ctx)
				return tooLargeRV(key, uint64(withRev), current)
			}
			return err
		}
		if err := checkMinRV(key, fromRV, resp.Header.Revision); err != nil {
			return err
		}
		if len(resp.Kvs) == 0 && resp.More {
			return errors.New("etcd3: no results were found, but etcd indicated there were more values remaining")
		}
		hasMore = resp.More
		if withRev == 0 {
			// Later pages read the revision the first one was read at.
			withRev = resp.Header.Revision
			options = append(options, clientv3.WithRev(withRev))
		}
		if pred.Empty() {
			items.grow(len(resp.Kvs))
		}
		fetched += len(resp.Kvs)
		if est := s.sizes.Load(); est != nil {
			est.observe(s.pathPrefix, resp.Kvs)
		}

		for i, kv := range resp.Kvs {
			if paging && int64(items.len()) >= pred.Limit {
				hasMore = true
				break
			}
			lastKey = kv.Key
			if err := ctx.Err(); err != nil {
				return err
			}
			obj, err := s.decodeNew(key, kv.Value, items.newItem, kv.ModRevision)
			if err != nil {
				// As upstream, a corrupt object does not end the list:
				// every one met is reported (readErrs.Err).
				if readErrs.Add(string(kv.Key), err) {
					return readErrs.Err(s.resource)
				}
				resp.Kvs[i] = nil
				continue
			}
			if ok, err := pred.Matches(obj); err == nil && ok {
				items.add(obj)
			}
			evaluated++
			resp.Kvs[i] = nil // free early: long lists take a while to decode
		}

		if !hasMore || !paging || int64(items.len()) >= pred.Limit {
			break
		}
		if pred.Empty() && readErrs.Any() {
			// Upstream reads a page that selects everything as one
			// etcd range stream of Limit keys (EtcdRangeStream, on by
			// default in v1.37, against etcd >= 3.7): the keys after
			// them are not read, whatever the page lacks.
			break
		}
		// The predicate dropped items: read on, with growing pages.
		if pageSize < maxPageSize {
			pageSize = min(pageSize*2, maxPageSize)
			options = append(options, clientv3.WithLimit(pageSize))
		}
		k = string(lastKey) + "\x00"
	}
	if err := readErrs.Err(s.resource); err != nil {
		return err
	}
	items.finish()

	if !hasMore {
		return setList(listObj, withRev, "", nil)
	}
	next, err := storage.EncodeContinue(string(lastKey)+"\x00", keyPrefix, withRev)
	if err != nil {
		return err
	}
	var remaining *int64
	if pred.Empty() {
		// resp.Count counts every key from this page's start; exact only
		// when nothing was filtered.
		c := resp.Count - int64(items.len())
		remaining = &c
	}
	return setList(listObj, withRev, next, remaining)
}

func setList(listObj runtime.Object, rev int64, next string, remaining *int64) error {
	if err := storage.SetListResourceVersion(listObj, uint64(rev), next, remaining); err != nil {
		return fmt.Errorf("etcd3: set list metadata: %w", err)
	}
	return nil
}

// continueExpired is the 410 for a continue token whose revision was
// compacted, with a fresh token resuming at the latest revision.
func continueExpired(key, continueKey, keyPrefix string) error {
	tok, err := storage.EncodeContinue(continueKey, keyPrefix, -1)
	if err != nil {
		tok = "" // cannot happen: continueKey came from a token under keyPrefix
	}
	return storage.NewContinueExpiredError(key, tok)
}
