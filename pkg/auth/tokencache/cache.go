package tokencache

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kapi-dev/kapi/pkg/audit"
	"github.com/kapi-dev/kapi/pkg/auth/authenticator"
	"github.com/kapi-dev/kapi/pkg/auth/user"
	"github.com/kapi-dev/kapi/pkg/endpoints/warning"
)

// Defaults are kube-apiserver's (k8s.io/kubernetes
// pkg/kubeapiserver/options/authentication.go, v1.37.2: TokenSuccessCacheTTL
// 10 s, TokenFailureCacheTTL 0; no flag sets them).
const (
	DefaultSuccessTTL = 10 * time.Second
	DefaultFailureTTL = 0
)

// sharedLookupTimeout bounds a call of the wrapped authenticator, which
// runs detached from the requests waiting for it (upstream's).
const sharedLookupTimeout = 30 * time.Second

// errAuthnCrash is the result of a wrapped authenticator that panicked.
var errAuthnCrash = apierrors.NewInternalError(errors.New("authentication failed unexpectedly"))

// Config configures a cache.
type Config struct {
	// SuccessTTL is how long an authenticated result is kept, FailureTTL
	// how long one that is not (0: not kept).
	SuccessTTL, FailureTTL time.Duration
	// CacheErrors keeps results with an error as failures (kube-apiserver
	// sets it for its token union); without it they are never kept.
	CacheErrors bool
	// Now is the clock of expiries (nil: time.Now); tests set it.
	Now func() time.Time
	// Metrics counts requests and fetches (nil: not counted).
	Metrics *Metrics
	// Logger logs a wrapped authenticator's panic (nil: slog.Default()).
	Logger *slog.Logger
}

// record is what one call of the wrapped authenticator returned, with the
// audit annotations and warnings it added.
type record struct {
	user        *user.Info
	auds        []string
	ok          bool
	err         error
	annotations map[string]string
	warnings    []string
}

// Cache is an authenticator.Token that caches the results of another.
// It is safe for concurrent use.
type Cache struct {
	inner   authenticator.Token
	cfg     Config
	store   *store
	group   singleflight.Group
	hashers sync.Pool
}

var _ authenticator.Token = (*Cache)(nil)

// hasher is a pooled HMAC with scratch space, so a key costs one
// allocation (the key string).
type hasher struct {
	mac hash.Hash
	buf [256]byte
	sum [sha256.Size]byte
}

// New wraps inner in a cache configured by cfg. The results of users who
// share a token are shared: inner's users must not be changed by callers.
func New(inner authenticator.Token, cfg Config) *Cache {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		panic(err) // crypto/rand does not fail
	}
	c := &Cache{inner: inner, cfg: cfg, store: newStore(cfg.Now)}
	c.hashers.New = func() any { return &hasher{mac: hmac.New(sha256.New, secret)} }
	return c
}

// AuthenticateToken returns the cached result of token for the audiences
// of ctx, or authenticates it with the wrapped authenticator. A result
// served adds its audit annotations and warnings to ctx's request only
// when the token authenticated (upstream's cache drops those of a failure).
func (c *Cache) AuthenticateToken(ctx context.Context, token string) (*user.Info, []string, bool, error) {
	rec := c.lookup(ctx, token)
	if !rec.ok || rec.err != nil {
		return nil, nil, false, rec.err
	}
	for k, v := range rec.annotations {
		audit.AddAnnotation(ctx, k, v)
	}
	for _, w := range rec.warnings {
		warning.AddWarning(ctx, w)
	}
	return rec.user, rec.auds, true, nil
}

func (c *Cache) lookup(ctx context.Context, token string) *record {
	start := time.Now()
	auds, audsSet := authenticator.AudiencesFrom(ctx)
	key := c.key(token, auds, audsSet)
	if rec, ok := c.store.get(key); ok {
		c.cfg.Metrics.request(hit, elapsed(start))
		return rec
	}
	c.cfg.Metrics.add(blocked, 1)
	defer c.cfg.Metrics.add(blocked, -1)
	defer func() { c.cfg.Metrics.request(miss, elapsed(start)) }()

	ch := c.group.DoChan(key, func() (any, error) {
		return c.fetch(key, token, auds, audsSet), nil
	})
	select {
	case res := <-ch:
		return res.Val.(*record)
	case <-ctx.Done():
		// This request gives up; the shared call goes on and may still
		// fill the cache for others. Its cancellation is its own result,
		// never cached.
		return &record{err: ctx.Err()}
	}
}

// elapsed is the seconds since start, truncated to milliseconds as
// upstream observes its latency.
func elapsed(start time.Time) float64 {
	return float64(time.Since(start).Milliseconds()) / 1000
}

// fetch calls the wrapped authenticator once for everyone waiting on key,
// on a context of its own that carries only the requested audiences and
// collects the annotations and warnings, and keeps the result as
// configured. It always returns a record: a panic becomes an internal
// error (singleflight would re-panic it on a goroutine of its own).
func (c *Cache) fetch(key, token string, auds []string, audsSet bool) (result *record) {
	rec := &record{}
	result = rec
	c.cfg.Metrics.add(inFlight, 1)
	defer func() {
		if r := recover(); r != nil {
			rec.err = errAuthnCrash
			result = rec
			buf := make([]byte, 64<<10)
			buf = buf[:runtime.Stack(buf, false)]
			c.cfg.Logger.Error("token authenticator panicked", "panic", r, "stack", string(buf))
		}
		c.cfg.Metrics.fetched(rec.err)
		c.cfg.Metrics.add(inFlight, -1)
	}()

	// Another call may have filled the cache since this request looked.
	if cached, ok := c.store.get(key); ok {
		return cached
	}

	ctx, cancel := context.WithTimeout(context.Background(), sharedLookupTimeout)
	defer cancel()
	if audsSet {
		ctx = authenticator.WithAudiences(ctx, auds)
	}
	warnings := &warningRecorder{}
	ctx = warning.WithRecorder(ctx, warnings)
	ctx = audit.WithContext(ctx)

	rec.user, rec.auds, rec.ok, rec.err = c.inner.AuthenticateToken(ctx, token)
	rec.annotations = audit.FromContext(ctx).Annotations()
	rec.warnings = warnings.take()

	if rec.err != nil && !c.cfg.CacheErrors {
		return rec
	}
	switch {
	case rec.ok && c.cfg.SuccessTTL > 0:
		c.store.set(key, rec, c.cfg.SuccessTTL)
	case !rec.ok && c.cfg.FailureTTL > 0:
		c.store.set(key, rec, c.cfg.FailureTTL)
	}
	return rec
}

// key is the HMAC of the length-prefixed token and audiences (as
// upstream's keyFunc), plus whether audiences were requested at all: kapi's
// authenticators read "none requested" as the API server's own and an
// empty list as none, so the two must not share a result.
func (c *Cache) key(token string, auds []string, audsSet bool) string {
	h := c.hashers.Get().(*hasher)
	defer c.hashers.Put(h)
	h.mac.Reset()
	set := byte(0)
	if audsSet {
		set = 1
	}
	h.buf[0] = set
	h.mac.Write(h.buf[:1])
	h.writeString(token)
	h.writeLength(len(auds))
	for _, a := range auds {
		h.writeString(a)
	}
	return string(h.mac.Sum(h.sum[:0]))
}

func (h *hasher) writeLength(n int) {
	binary.BigEndian.PutUint32(h.buf[:4], uint32(n))
	h.mac.Write(h.buf[:4])
}

// writeString writes the length of s and s, through buf so that no copy
// of s is allocated.
func (h *hasher) writeString(s string) {
	h.writeLength(len(s))
	for len(s) > 0 {
		n := copy(h.buf[:], s)
		h.mac.Write(h.buf[:n])
		s = s[n:]
	}
}

// warningRecorder collects the warnings of one fetch.
type warningRecorder struct {
	mu    sync.Mutex
	texts []string
}

func (r *warningRecorder) AddWarning(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts = append(r.texts, text)
}

func (r *warningRecorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.texts
	r.texts = nil
	return t
}
