package cacheable

import "context"

type itemKey struct{}

// Item receives the object of one single-object read (a GET) as a shared
// Object, from a storage that can hand it out without copying it: a
// watch cache. The reader asks with [WithItem] and encodes the Object
// (its bytes are kept with the cache's entry and reused by later reads);
// a storage that does not fill it fills the object it was given, as
// usual.
type Item struct {
	obj *Object
}

// WithItem asks the storage read made with the returned context to hand
// its object to the returned Item instead of copying it into the object
// it fills (which is then left as it was: empty; a storage.ItemGetter
// makes none).
func WithItem(ctx context.Context) (context.Context, *Item) {
	it := &Item{}
	return context.WithValue(ctx, itemKey{}, it), it
}

// ItemWanted returns the Item a single-object read with ctx fills, or nil.
func ItemWanted(ctx context.Context) *Item {
	it, _ := ctx.Value(itemKey{}).(*Item)
	return it
}

// Set hands the read's object over (a storage calls it at most once).
func (it *Item) Set(obj *Object) { it.obj = obj }

// Get returns the object handed over; ok is false if the storage did not
// fill it (the object it was given holds the result).
func (it *Item) Get() (obj *Object, ok bool) { return it.obj, it.obj != nil }
