package allocator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kapi-dev/kapi/pkg/storage"
)

// directTries is how many random free-looking values AllocateNext tries
// with a bare Create before it lists the allocations to find a free one.
const directTries = 4

// keyedRange allocates the offsets 0..size-1 of a range, each allocation
// being the key prefix+"/"+name(offset) in storage. It is safe for
// concurrent use by any number of allocators on the same storage.
type keyedRange struct {
	storage storage.Interface
	prefix  string
	size    int
	// name is the key name of an offset; parse its inverse (ok=false for
	// a name that is not in the range).
	name  func(offset int) string
	parse func(name string) (offset int, ok bool)
	// skip marks offsets AllocateNext never hands out (reserved values,
	// which can still be allocated by name).
	skip func(offset int) bool
	// allocated is the error for a taken value.
	allocated error
}

func (r *keyedRange) key(offset int) string { return path.Join(r.prefix, r.name(offset)) }

// allocate takes offset for owner; a dry run only checks that it is free.
func (r *keyedRange) allocate(ctx context.Context, offset int, owner string, dryRun bool) error {
	if dryRun {
		taken, err := r.has(ctx, offset)
		if err != nil {
			return err
		}
		if taken {
			return r.allocated
		}
		return nil
	}
	obj := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: r.name(offset), CreationTimestamp: metav1.Now()},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &owner},
	}
	if err := r.storage.Create(ctx, r.key(offset), obj, nil); err != nil {
		if storage.IsExists(err) {
			return r.allocated
		}
		return fmt.Errorf("allocate %s: %w", r.key(offset), err)
	}
	return nil
}

// has reports whether offset is allocated.
func (r *keyedRange) has(ctx context.Context, offset int) (bool, error) {
	err := r.storage.Get(ctx, r.key(offset), storage.GetOptions{}, &coordinationv1.Lease{})
	switch {
	case err == nil:
		return true, nil
	case storage.IsNotFound(err):
		return false, nil
	default:
		return false, fmt.Errorf("read %s: %w", r.key(offset), err)
	}
}

// release frees offset; a value that is not allocated is not an error.
func (r *keyedRange) release(ctx context.Context, offset int) error {
	err := r.storage.Delete(ctx, r.key(offset), &coordinationv1.Lease{}, nil, nil, nil)
	if err != nil && !storage.IsNotFound(err) {
		return fmt.Errorf("release %s: %w", r.key(offset), err)
	}
	return nil
}

// Allocation describes one allocated value.
type Allocation struct {
	// Owner is who took it, e.g. "services/default/web".
	Owner string
	// Created is when it was taken.
	Created time.Time
	// ResourceVersion identifies this allocation of the value (a value
	// released and taken again has another).
	ResourceVersion string
}

// releaseIfUnchanged frees offset if it is still the allocation al (not
// released and taken again since al was read).
func (r *keyedRange) releaseIfUnchanged(ctx context.Context, offset int, al Allocation) error {
	rv := al.ResourceVersion
	err := r.storage.Delete(ctx, r.key(offset), &coordinationv1.Lease{}, &storage.Preconditions{ResourceVersion: &rv}, nil, nil)
	if err != nil && !storage.IsNotFound(err) && !storage.IsConflict(err) {
		return fmt.Errorf("release %s: %w", r.key(offset), err)
	}
	return nil
}

// list returns the allocated offsets.
func (r *keyedRange) list(ctx context.Context) (map[int]Allocation, error) {
	var l coordinationv1.LeaseList
	if err := r.storage.GetList(ctx, r.prefix, storage.ListOptions{Recursive: true}, &l); err != nil {
		return nil, fmt.Errorf("list %s: %w", r.prefix, err)
	}
	out := make(map[int]Allocation, len(l.Items))
	for i := range l.Items {
		offset, ok := r.parse(l.Items[i].Name)
		if !ok {
			continue // left over from another range configuration
		}
		owner := ""
		if h := l.Items[i].Spec.HolderIdentity; h != nil {
			owner = *h
		}
		out[offset] = Allocation{Owner: owner, Created: l.Items[i].CreationTimestamp.Time, ResourceVersion: l.Items[i].ResourceVersion}
	}
	return out, nil
}

// next allocates (or, in a dry run, finds) a free offset for owner: a few
// random candidates first, then a scan of what the listing shows free from
// a random start. Losing a race for a value moves on to the next one.
func (r *keyedRange) next(ctx context.Context, owner string, dryRun bool) (int, error) {
	if r.size <= 0 {
		return 0, ErrFull
	}
	try := func(offset int) (bool, error) {
		if r.skip != nil && r.skip(offset) {
			return false, nil
		}
		err := r.allocate(ctx, offset, owner, dryRun)
		if errors.Is(err, ErrAllocated) {
			return false, nil
		}
		return err == nil, err
	}
	for range directTries {
		offset := rand.IntN(r.size)
		if ok, err := try(offset); ok || err != nil {
			return offset, err
		}
	}
	taken, err := r.list(ctx)
	if err != nil {
		return 0, err
	}
	start := rand.IntN(r.size)
	for i := range r.size {
		offset := (start + i) % r.size
		if _, used := taken[offset]; used {
			continue
		}
		if ok, err := try(offset); ok || err != nil {
			return offset, err
		}
	}
	return 0, ErrFull
}
