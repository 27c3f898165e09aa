package storage

import "context"

// ttlKey is the context key of WithTTL.
type ttlKey struct{}

// WithTTL returns ctx telling a Create or GuaranteedUpdate made with it
// to write the object with a time to live of seconds: the etcd3 store
// attaches the key to an etcd lease of at least that TTL, as
// kube-apiserver's storage does with the TTL of an object's strategy
// (Events: --event-ttl). Other backends ignore it. 0: no TTL.
func WithTTL(ctx context.Context, seconds uint64) context.Context {
	return context.WithValue(ctx, ttlKey{}, seconds)
}

// TTL returns the TTL of ctx (WithTTL), 0 if none.
func TTL(ctx context.Context) uint64 {
	ttl, _ := ctx.Value(ttlKey{}).(uint64)
	return ttl
}
