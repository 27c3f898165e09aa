package etcd3

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kapi-dev/kapi/pkg/storage"
	storagemetrics "github.com/kapi-dev/kapi/pkg/storage/metrics"
)

// objState is what a write is conditioned on: an object, its encoded
// form and the ModRevision it was read at (0: it does not exist).
type objState struct {
	obj  runtime.Object
	data []byte
	rev  int64
}

// stateReader reads the current state of one key.
type stateReader struct {
	s              *Store
	key, etcdKey   string
	newObj         func() runtime.Object
	ignoreNotFound bool
}

// current reads the key now.
func (r *stateReader) current(ctx context.Context) (*objState, error) {
	start := time.Now()
	resp, err := r.s.client.Get(ctx, r.etcdKey, r.s.readOpts()...)
	r.s.metrics.EtcdRequest(storagemetrics.OpGet, start, err)
	if err != nil {
		return nil, interpretError(err, r.key)
	}
	return r.fromKvs(resp.Kvs)
}

// fromKvs builds the state from a read of the key (as returned in a failed
// transaction's Else branch).
func (r *stateReader) fromKvs(kvs []*mvccpb.KeyValue) (*objState, error) {
	if len(kvs) == 0 {
		if !r.ignoreNotFound {
			return nil, storage.NewError(storage.ErrCodeKeyNotFound, r.key, 0, "")
		}
		return &objState{obj: r.newObj()}, nil
	}
	kv := kvs[0]
	obj, err := r.s.decodeNew(r.key, kv.Value, r.newObj, kv.ModRevision)
	if err != nil {
		return nil, err
	}
	return &objState{obj: obj, data: kv.Value, rev: kv.ModRevision}, nil
}

// fromObject builds the state from a caller's guess of the current object
// (a copy: the caller's object is not touched).
func (r *stateReader) fromObject(cached runtime.Object) (*objState, error) {
	obj := cached.DeepCopyObject()
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		return nil, storage.NewError(storage.ErrCodeInvalidObj, r.key, 0, "cached object: "+err.Error())
	}
	data, err := r.s.encode(r.key, obj)
	if err != nil {
		return nil, err
	}
	if err := storage.SetObjectResourceVersion(obj, rv); err != nil {
		return nil, storage.NewError(storage.ErrCodeInvalidObj, r.key, 0, "cached object: "+err.Error())
	}
	return &objState{obj: obj, data: data, rev: int64(rv)}, nil
}

// guess builds the state from a caller's guess of the current object
// without its stored form (data nil): a copy of the object and the
// revision it claims. GuaranteedUpdate then lets etcd tell whether a write
// would change anything (see there) instead of encoding the guess.
func (r *stateReader) guess(cached runtime.Object) (*objState, error) {
	obj := cached.DeepCopyObject()
	rv, err := storage.ObjectResourceVersion(obj)
	if err != nil {
		return nil, storage.NewError(storage.ErrCodeInvalidObj, r.key, 0, "cached object: "+err.Error())
	}
	return &objState{obj: obj, rev: int64(rv)}, nil
}

// opPut is clientv3.OpPut(k, string(value), opts...) without its two copies
// of the value (the conversion to a string, and OpPut's back to a slice):
// the request holds value itself. value is never changed once encoded.
func opPut(k string, value []byte, opts ...clientv3.OpOption) clientv3.Op {
	op := clientv3.OpPut(k, "", opts...)
	op.WithValueBytes(value)
	return op
}

// valueDiffers is clientv3.Compare(clientv3.Value(k), "!=", string(value))
// without its two copies of value (Txn.If still makes its own).
func valueDiffers(k string, value []byte) clientv3.Cmp {
	cmp := clientv3.Compare(clientv3.Value(k), "!=", "")
	cmp.WithValueBytes(value)
	return cmp
}

// GuaranteedUpdate implements [storage.Interface].
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object) error {
	k, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	r := &stateReader{s: s, key: key, etcdKey: k, newObj: newLike(destination), ignoreNotFound: ignoreNotFound}

	var st *objState
	current := false // st was read from etcd (not guessed)
	if cachedExistingObject != nil {
		st, err = r.guess(cachedExistingObject)
	} else {
		st, err = r.current(ctx)
		current = true
	}
	if err != nil {
		return err
	}

	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := checkPreconditions(key, preconditions, st.obj); err != nil {
			if current {
				return err
			}
			if st, err = r.current(ctx); err != nil {
				return err
			}
			current = true
			continue
		}

		ret, updateErr := tryUpdate(st.obj)
		if updateErr != nil {
			if current {
				return updateErr
			}
			// The guess may be stale: retry on the real object, unless
			// the guess was right after all.
			guessed := st.rev
			if st, err = r.current(ctx); err != nil {
				return err
			}
			current = true
			if st.rev == guessed {
				return updateErr
			}
			continue
		}

		data, err := s.encode(key, ret)
		if err != nil {
			return err
		}
		if current && st.rev != 0 && bytes.Equal(data, st.data) {
			// Nothing changes: no write (as upstream).
			return s.decode(key, st.data, destination, st.rev)
		}

		// The write is conditioned on the key's revision. On a guess (not
		// read from etcd, no stored form) it is conditioned on a change of
		// the stored value too: etcd then tells in the same round trip
		// whether the guess was right and the update changes nothing
		// (upstream encodes the guess to compare, and re-reads the key
		// before answering such a no-op).
		noop := !current && st.rev != 0
		cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(k), "=", st.rev)}
		if noop {
			cmps = append(cmps, valueDiffers(k, data))
		}
		putOpts, err := s.leaseOpts(ctx)
		if err != nil {
			return err
		}
		start := time.Now()
		resp, err := s.client.Txn(ctx).
			If(cmps...).
			Then(opPut(k, data, putOpts...)).
			Else(clientv3.OpGet(k)).
			Commit()
		s.metrics.EtcdRequest(storagemetrics.OpUpdate, start, err)
		if err != nil {
			return interpretError(err, key)
		}
		if !resp.Succeeded {
			kvs := resp.Responses[0].GetResponseRange().Kvs
			if noop && len(kvs) == 1 && kvs[0].ModRevision == st.rev && bytes.Equal(kvs[0].Value, data) {
				// The guess was right and nothing changes: no write.
				return s.decode(key, kvs[0].Value, destination, st.rev)
			}
			s.logger.Debug("update conflict, retrying", "key", key, "expected", st.rev)
			if st, err = r.fromKvs(kvs); err != nil {
				return err
			}
			current = true
			continue
		}
		return s.decode(key, data, destination, resp.Header.Revision)
	}
}

// Delete implements [storage.Interface].
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object) error {
	k, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	r := &stateReader{s: s, key: key, etcdKey: k, newObj: newLike(out)}

	var st *objState
	current := false
	if cachedExistingObject != nil {
		st, err = r.fromObject(cachedExistingObject)
	} else {
		st, err = r.current(ctx)
		current = true
	}
	if err != nil {
		return err
	}

	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		check := checkPreconditions(key, preconditions, st.obj)
		if check == nil && validateDeletion != nil {
			check = validateDeletion(ctx, st.obj)
		}
		if check != nil {
			if current {
				return check
			}
			guessed := st.rev
			if st, err = r.current(ctx); err != nil {
				return err
			}
			current = true
			if st.rev == guessed {
				return check
			}
			continue
		}

		start := time.Now()
		resp, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", st.rev)).
			Then(clientv3.OpDelete(k)).
			Else(clientv3.OpGet(k)).
			Commit()
		s.metrics.EtcdRequest(storagemetrics.OpDelete, start, err)
		if err != nil {
			return interpretError(err, key)
		}
		if !resp.Succeeded {
			s.logger.Debug("delete conflict, retrying", "key", key, "expected", st.rev)
			if st, err = r.fromKvs(resp.Responses[0].GetResponseRange().Kvs); err != nil {
				return err
			}
			current = true
			continue
		}
		// As kube: the deleted object carries the deletion's revision.
		return s.decode(key, st.data, out, resp.Header.Revision)
	}
}

// checkPreconditions checks p against obj; a failure is a conflict.
func checkPreconditions(key string, p *storage.Preconditions, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return storage.NewError(storage.ErrCodeInvalidObj, key, 0, "cannot check preconditions: "+err.Error())
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

// DeleteCorrupt implements [storage.CorruptDeleter], as kube-apiserver's
// etcd3 Delete with ExpectTransformOrDecodeError: the current state is read
// from etcd; a missing key is not found, a decodable object is refused, an
// undecodable one is deleted if still at the revision read (else read
// again).
func (s *Store) DeleteCorrupt(ctx context.Context, key string, dryRun bool) error {
	k, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	for {
		start := time.Now()
		resp, err := s.client.Get(ctx, k)
		s.metrics.EtcdRequest(storagemetrics.OpGet, start, err)
		if err != nil {
			return interpretError(err, key)
		}
		if len(resp.Kvs) == 0 {
			return storage.NewError(storage.ErrCodeKeyNotFound, key, 0, "")
		}
		kv := resp.Kvs[0]
		if err := s.decode(key, kv.Value, s.newFunc(), kv.ModRevision); err == nil {
			return &storage.DecodableError{Key: k}
		}
		if dryRun {
			return nil
		}
		start = time.Now()
		txn, err := s.client.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(k), "=", kv.ModRevision)).
			Then(clientv3.OpDelete(k)).
			Commit()
		s.metrics.EtcdRequest(storagemetrics.OpDelete, start, err)
		if err != nil {
			return interpretError(err, key)
		}
		if txn.Succeeded {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
