// Package cacheable lets one watch event's object be serialized once per
// encoding and shared by every watcher that sends it, as upstream's watch
// cache does with its cachingObject.
//
// [Object] wraps an object that is never changed again (a watch cache's
// event) and implements runtime.CacheableObject: the first CacheEncode for
// an encoder identifier encodes a deep copy of the object (encoding sets
// its kind) and keeps the bytes; later ones write those bytes. Consumers
// that need the object itself call GetObject, which returns a deep copy.
//
// A watch cache hands Objects only to watches whose context asks for them
// ([WithObjects]): the API handlers, which encode them, ask; in-process
// consumers that read events' objects do not, and get plain objects.
//
// A list read from a watch cache may hand out its items the same way
// ([WithItems]): each cache entry keeps one Object, whose encodings
// ([Object.Encoded]) are computed on the first read that needs them and
// reused by every later list (or GET) of that entry.
package cacheable
