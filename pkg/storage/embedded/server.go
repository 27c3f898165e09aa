package embedded

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.etcd.io/etcd/server/v3/etcdserver"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3client"
	"go.etcd.io/etcd/server/v3/etcdserver/api/v3rpc"
	"go.etcd.io/etcd/server/v3/proxy/grpcproxy/adapter"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// Defaults of [Config].
const (
	// DefaultStartTimeout bounds the wait for the server to become ready.
	DefaultStartTimeout = 60 * time.Second
	// DefaultMaxRequestBytes is the largest request etcd accepts. It is above
	// kube's 1.5 MiB object limit (which storage enforces on the encoded
	// object) so that an object just under that limit, plus its key and the
	// transaction around it, still fits.
	DefaultMaxRequestBytes = 2 * 1024 * 1024
	// grpcOverhead is what the client allows on top of MaxRequestBytes for
	// the gRPC envelope.
	grpcOverhead = 512 * 1024
)

// noPeerURL is the peer URL the one member advertises: it never listens
// on it (see the package doc).
var noPeerURL = url.URL{Scheme: "unix", Host: "kapi-embedded-no-peer-listener:0"}

// Config configures an embedded etcd server. The zero value (plus DataDir)
// is a durable server with etcd's defaults.
type Config struct {
	// DataDir holds etcd's data (kapi passes <data-dir>/etcd). It is created
	// with mode 0700 if missing. Required.
	DataDir string
	// Logger receives etcd's warnings and errors (default slog.Default()).
	Logger *slog.Logger
	// UnsafeNoFsync disables fsync: fast, but writes can be lost on a crash.
	// For tests only.
	UnsafeNoFsync bool
	// QuotaBackendBytes is the database size limit (0: etcd's 2 GiB).
	QuotaBackendBytes int64
	// MaxRequestBytes is the largest request accepted (0:
	// DefaultMaxRequestBytes).
	MaxRequestBytes uint
	// WatchProgressNotifyInterval is how often idle watches that asked for
	// progress notifications get one (0: etcd's default, 10 minutes).
	WatchProgressNotifyInterval time.Duration
	// StartTimeout bounds the wait for readiness (0: DefaultStartTimeout).
	StartTimeout time.Duration
	// Cluster, when set, makes the server one member of a multi-member
	// etcd cluster: it listens for peers and for remote clients on TCP,
	// both with mutual TLS. Nil: the single member without any TCP
	// listener.
	Cluster *Cluster
}

// Cluster is the membership of a clustered embedded etcd (issue 20: the
// building block of kapi servers that form their own etcd cluster).
type Cluster struct {
	// Name is this member's name, unique in the cluster.
	Name string
	// PeerURL (https://ip:port) is listened on and advertised for raft
	// traffic; ClientURL (https://ip:port) for other servers' clients.
	PeerURL, ClientURL url.URL
	// CertFile and KeyFile are this member's certificate (usable as a
	// TLS server and client: peers dial each other), CAFile the CA every
	// peer and client certificate must be signed by.
	CertFile, KeyFile, CAFile string
	// InitialCluster is the membership to start with, name=peerURL
	// comma-separated, this member included.
	InitialCluster string
	// Join starts the member into an existing cluster (it was added with
	// MemberAdd first); false bootstraps a new one. Both are ignored once
	// the data dir holds data.
	Join bool
	// ReusePort sets SO_REUSEPORT on the peer and client listeners, so
	// that they bind ports a test reserved (internal/testports) for its
	// whole run, restarts included, with no moment in which another
	// process could take them.
	ReusePort bool
}

// Server is a running embedded etcd with a client connected to it.
type Server struct {
	etcd      *embed.Etcd
	client    *clientv3.Client
	endpoint  string
	sockets   *sockets
	logger    *slog.Logger
	readyIn   time.Duration
	closing   *atomic.Bool // quiets etcd's logs during Close
	closeOnce sync.Once
	single    bool // one member: Config.Cluster was nil
}

// Start starts etcd on cfg.DataDir and returns when it is ready to serve
// (or fails: on a start error, when ctx ends, or after cfg.StartTimeout).
func Start(ctx context.Context, cfg Config) (*Server, error) {
	begin := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embedded etcd: %w", context.Cause(ctx))
	}
	if cfg.DataDir == "" {
		return nil, errors.New("embedded etcd: data dir is required")
	}
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: data dir %q: %w", cfg.DataDir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded etcd: create data dir: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logger = logger.With("component", "etcd")
	maxReq := cfg.MaxRequestBytes
	if maxReq == 0 {
		maxReq = DefaultMaxRequestBytes
	}
	timeout := cfg.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}

	// Damaged data is reported before etcd touches it: etcd would panic,
	// die of SIGBUS or wait forever for a leader on it.
	if err := checkMemberData(dir, cfg.Cluster != nil); err != nil {
		return nil, err
	}
	socks, err := newSockets(dir)
	if err != nil {
		return nil, err
	}

	closing := new(atomic.Bool)
	guard := newStartGuard()
	ec := etcdConfig(cfg, dir, socks, maxReq, logger, closing, guard)
	if tuneEtcdConfig != nil {
		tuneEtcdConfig(ec)
	}
	e, err := startEtcd(ec, guard, dir)
	if err != nil {
		_ = socks.remove()
		return nil, err
	}
	// stop is bounded: an etcd that never became ready (no leader) may
	// never finish closing either, and a failed start must still return.
	stop := func() {
		closing.Store(true)
		if !closeWithin(e, failedStartCloseTimeout) {
			logger.Warn("embedded etcd did not stop after a failed start; leaving it", "timeout", failedStartCloseTimeout)
		}
		_ = socks.remove()
	}
	if cfg.Cluster == nil {
		// A lone member leads at once instead of after its election
		// clock (campaign.go); the wait below is unchanged.
		campaignCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		go campaignNow(campaignCtx, e.Server, campaignLimit)
	}
	if err := waitReady(ctx, e, guard, timeout); err != nil {
		stop()
		return nil, err
	}
	if cfg.Cluster != nil {
		if err := waitClusterVersion(ctx, e, begin.Add(timeout)); err != nil {
			stop()
			return nil, err
		}
	}
	// From here on etcd's panics and fatal errors are etcd's again: a
	// server that cannot write its data must not go on.
	guard.started()
	endpoint, err := clientEndpoint(e)
	if err != nil {
		stop()
		return nil, err
	}
	client, err := newClient(e, cfg, endpoint, maxReq, logger)
	if err != nil {
		stop()
		return nil, err
	}
	if os.Getenv("KAPI_TRACE") != "" {
		fmt.Fprintf(os.Stderr, "TRACE %s etcd-ready in %s\n", time.Now().Format("15:04:05.000000"), time.Since(begin))
	}
	s := &Server{etcd: e, client: client, endpoint: endpoint, sockets: socks, logger: logger, readyIn: time.Since(begin), closing: closing, single: cfg.Cluster == nil}
	logger.Info("embedded etcd ready", "endpoint", endpoint, "dataDir", dir, "duration", s.readyIn)
	return s, nil
}

// newClient returns the server's own client. A single member's is
// in-process (etcd's v3client): each request is a function call into the
// etcd server's gRPC service implementations (the same code the gRPC
// server runs, minus the network, HTTP/2 framing and protobuf encoding of
// the request and the response), and each watch stream a pair of Go
// channels. In kapitest's start on embedded etcd that was a third of the
// CPU (310 -> 215 ms per start and stop) and 3 MiB per idle server (the
// gRPC connection's buffers and goroutines).
//
// What the gRPC server would add and the in-process client skips: the
// client's request size limit (etcd still refuses a proposal over
// MaxRequestBytes: ErrRequestTooLarge, as the storage layer expects) and
// the server's interceptors, of which only the "require leader" check of
// watches matters, and only in a cluster: a lone member that serves is
// its own leader. As over gRPC, a call whose context has already ended
// fails before it reaches etcd (checkedKV, checkedLease). Clustered members
// keep the gRPC client over the socket,
// so that a partitioned member's watches end (rpctypes.MetadataRequireLeaderKey).
// Other clients (snapshots, tools) still connect to [Server.Endpoints].
func newClient(e *embed.Etcd, cfg Config, endpoint string, maxReq uint, logger *slog.Logger) (*clientv3.Client, error) {
	if cfg.Cluster == nil {
		c := v3client.New(e.Server)
		c.KV = clientv3.NewKVFromKVClient(checkedKV{adapter.KvServerToKvClient(v3rpc.NewQuotaKVServer(e.Server))}, c)
		c.Lease = clientv3.NewLeaseFromLeaseClient(checkedLease{adapter.LeaseServerToLeaseClient(v3rpc.NewQuotaLeaseServer(e.Server))}, c, time.Second)
		return c, nil
	}
	client, err := clientv3.New(clientv3.Config{
		Endpoints:          []string{endpoint},
		DialTimeout:        5 * time.Second,
		Logger:             NewZapLogger(logger, zap.WarnLevel),
		MaxCallSendMsgSize: int(maxReq) + grpcOverhead,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded etcd: client for %s: %w", endpoint, err)
	}
	return client, nil
}

// checkedKV is the in-process KV client with gRPC's first step: a call
// whose context has already ended fails (codes.Canceled or
// DeadlineExceeded, which clientv3 turns back into the context's error)
// without reaching the server. Called directly, etcd would go on with the
// request and might still commit a write the caller gave up on.
type checkedKV struct{ pb.KVClient }

func (k checkedKV) Range(ctx context.Context, in *pb.RangeRequest, opts ...grpc.CallOption) (*pb.RangeResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return k.KVClient.Range(ctx, in, opts...)
}

func (k checkedKV) Put(ctx context.Context, in *pb.PutRequest, opts ...grpc.CallOption) (*pb.PutResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return k.KVClient.Put(ctx, in, opts...)
}

func (k checkedKV) DeleteRange(ctx context.Context, in *pb.DeleteRangeRequest, opts ...grpc.CallOption) (*pb.DeleteRangeResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return k.KVClient.DeleteRange(ctx, in, opts...)
}

func (k checkedKV) Txn(ctx context.Context, in *pb.TxnRequest, opts ...grpc.CallOption) (*pb.TxnResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return k.KVClient.Txn(ctx, in, opts...)
}

func (k checkedKV) Compact(ctx context.Context, in *pb.CompactionRequest, opts ...grpc.CallOption) (*pb.CompactionResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return k.KVClient.Compact(ctx, in, opts...)
}

// checkedLease is checkedKV for the lease calls that change state.
type checkedLease struct{ pb.LeaseClient }

func (l checkedLease) LeaseGrant(ctx context.Context, in *pb.LeaseGrantRequest, opts ...grpc.CallOption) (*pb.LeaseGrantResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return l.LeaseClient.LeaseGrant(ctx, in, opts...)
}

func (l checkedLease) LeaseRevoke(ctx context.Context, in *pb.LeaseRevokeRequest, opts ...grpc.CallOption) (*pb.LeaseRevokeResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return l.LeaseClient.LeaseRevoke(ctx, in, opts...)
}

// startEtcd runs embed.StartEtcd, turning a panic or fatal error of etcd
// while it starts into an error naming dir.
func startEtcd(ec *embed.Config, guard *startGuard, dir string) (*embed.Etcd, error) {
	type result struct {
		e   *embed.Etcd
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("embedded etcd: start on %s panicked: %v; %s", dir, r, restoreAdvice(dir))}
			}
		}()
		e, err := embed.StartEtcd(ec)
		done <- result{e, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("embedded etcd: start on %s: %w", dir, r.err)
		}
		return r.e, nil
	case err := <-guard.failed:
		// etcd gave up in one of its goroutines (the start goroutine is
		// left waiting for it; the process is expected to exit).
		return nil, fmt.Errorf("embedded etcd: start on %s failed: %w; %s", dir, err, restoreAdvice(dir))
	}
}

// tuneEtcdConfig, when set (by tests only), changes etcd's configuration
// before Start starts it.
var tuneEtcdConfig func(*embed.Config)

// campaignLimit bounds campaignNow: by then the election clock of a lone
// member (10 ms ticks, 50 ms election timeout, fast-forwarded) has
// elected it anyway.
const campaignLimit = 100 * time.Millisecond

// failedStartCloseTimeout bounds the wait for etcd to stop after a failed
// start.
const failedStartCloseTimeout = 10 * time.Second

// closeWithin closes e and reports whether it finished within d.
func closeWithin(e *embed.Etcd, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		e.Close()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// restoreAdvice is what to do when etcd cannot start on its data.
func restoreAdvice(dir string) string {
	return fmt.Sprintf("if the data in %s is damaged, restore it from a snapshot or a backup (etcdutl snapshot restore), or move it away to start with empty storage", dir)
}

// etcdConfig builds etcd's configuration: one member, its client socket
// in socks, no peer listener, etcd's logs bridged to logger.
func etcdConfig(cfg Config, dir string, socks *sockets, maxReq uint, logger *slog.Logger, closing *atomic.Bool, guard *startGuard) *embed.Config {
	ec := embed.NewConfig()
	ec.Dir = dir
	ec.Logger = "zap"
	ec.LogLevel = "warn"
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.New(newSlogCore(logger, zap.ErrorLevel, closing),
		zap.WithPanicHook(guard), zap.WithFatalHook(guard)))
	ec.UnsafeNoFsync = cfg.UnsafeNoFsync
	ec.QuotaBackendBytes = cfg.QuotaBackendBytes
	ec.MaxRequestBytes = maxReq
	ec.EnableGRPCGateway = false
	// A single member elects itself once its election timeout passes:
	// etcd fast-forwards a one-member cluster's election clock to one
	// tick short of ElectionMs (server.adjustTicks), then waits out
	// raft's randomized timeout (ElectionMs up to 2×ElectionMs), so the
	// member campaigns 1 to ElectionMs/TickMs ticks after the start:
	// 10–100 ms with 100 ms, 10–50 ms with 50 ms, the shortest etcd
	// accepts (5 × TickMs). The tick stays 10 ms, so an idle server wakes
	// no more often. With no peer, no heartbeat can be missed: the
	// timeout only decides how soon the member leads. Start does not
	// wait for this clock: it makes the member campaign as soon as raft
	// can (campaign.go); the clock is the fallback. (Clustered members
	// use etcd's defaults, below.)
	ec.TickMs = 10
	ec.ElectionMs = 50
	ec.AutoCompactionRetention = "0" // kapi compacts (etcd3.StartCompactor)
	// etcd keeps the last SnapshotCatchUpEntries raft entries in memory
	// (5,000 by default, each a whole write request: ~4 MB of live heap
	// under kapi-bench's writes) for a slow follower to catch up from. A
	// single member has no follower and no peer listener, so none can
	// ever join it; it keeps only a few. (Clustered members keep etcd's
	// default, below.)
	ec.SnapshotCatchUpEntries = singleMemberCatchUpEntries
	// etcd replays the WAL's entries since its last snapshot at every
	// start, holding them in memory, and snapshots every SnapshotCount
	// applied entries (10,000 by default): a single member restarted
	// after heavy writes decoded and applied up to 10,000 whole write
	// requests before it was ready, and kept them in its heap until
	// about 100 more writes came (measured: 9,000 writes of 1.5 KB
	// values, then a restart: 17.6–18.7 MB of live heap at idle and 25–40
	// ms to apply the replay after the election with the default; 3.9–4.0
	// MB and under 1 ms with 1,000). A snapshot here is what etcd v3.7 still
	// takes to disk: a commit of the database (bbolt commits every 100
	// ms anyway), the membership's small .snap file and a WAL record, and
	// the WAL files before it become purgeable; no data changes. A
	// single member has no follower a snapshot could be sent to.
	// (Clustered members keep etcd's default, below.)
	ec.SnapshotCount = singleMemberSnapshotCount
	if cfg.WatchProgressNotifyInterval > 0 {
		ec.WatchProgressNotifyInterval = cfg.WatchProgressNotifyInterval
	}

	client := url.URL{Scheme: "unix", Path: socks.client}
	ec.ListenClientUrls = []url.URL{client}
	ec.AdvertiseClientUrls = []url.URL{client}
	// No peer listener: a one-member cluster never dials its peer URL,
	// and etcd needs none to serve (a listener there would be plain HTTP
	// on loopback, reachable by every local user). The advertised URL is
	// only the member's name for it in the membership record; nothing
	// listens there.
	ec.ListenPeerUrls = nil
	ec.AdvertisePeerUrls = []url.URL{noPeerURL}
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	if c := cfg.Cluster; c != nil {
		// Several members: etcd's default timing (100 ms heartbeat, 1 s
		// election), as peers are further apart than a goroutine.
		ec.TickMs, ec.ElectionMs = 100, 1000
		ec.SnapshotCatchUpEntries = etcdserver.DefaultSnapshotCatchUpEntries
		ec.SnapshotCount = etcdserver.DefaultSnapshotCount
		ec.Name = c.Name
		ec.InitialClusterToken = clusterToken
		tlsInfo := transport.TLSInfo{CertFile: c.CertFile, KeyFile: c.KeyFile, TrustedCAFile: c.CAFile, ClientCertAuth: true}
		ec.PeerTLSInfo, ec.ClientTLSInfo = tlsInfo, tlsInfo
		ec.ListenPeerUrls = []url.URL{c.PeerURL}
		ec.AdvertisePeerUrls = []url.URL{c.PeerURL}
		// The unix socket stays first: it is this server's own client.
		ec.ListenClientUrls = []url.URL{client, c.ClientURL}
		ec.AdvertiseClientUrls = []url.URL{c.ClientURL}
		ec.InitialCluster = c.InitialCluster
		if c.Join {
			ec.ClusterState = embed.ClusterStateFlagExisting
		}
		ec.SocketOpts.ReusePort = c.ReusePort
	}
	return ec
}

// singleMemberCatchUpEntries is how many applied raft entries a
// single-member embedded etcd keeps in memory (etcd compacts its raft log
// every 100 applied entries, down to this many).
const singleMemberCatchUpEntries = 100

// singleMemberSnapshotCount is how many applied entries a single-member
// embedded etcd goes between snapshots (etcd's --snapshot-count), so how
// many a restart replays at most.
const singleMemberSnapshotCount = 1000

// clusterToken is the initial cluster token of clustered embedded etcd.
const clusterToken = "kapi-embedded"

// clientEndpoint is the endpoint a client dials: the unix socket.
func clientEndpoint(e *embed.Etcd) (string, error) {
	if len(e.Clients) == 0 {
		return "", errors.New("embedded etcd: no client listener")
	}
	for _, l := range e.Clients {
		if addr := l.Addr(); addr.Network() == "unix" {
			return "unix://" + addr.String(), nil
		}
	}
	return "", fmt.Errorf("embedded etcd: no unix socket among the client listeners (%s %s)", e.Clients[0].Addr().Network(), e.Clients[0].Addr())
}

func waitReady(ctx context.Context, e *embed.Etcd, guard *startGuard, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("embedded etcd: serving failed before ready: %w", err)
	case err := <-guard.failed:
		return fmt.Errorf("embedded etcd: failed before ready: %w; %s", err, restoreAdvice(e.Config().Dir))
	case <-e.Server.StopNotify():
		return errors.New("embedded etcd: server stopped before ready")
	case <-timer.C:
		return fmt.Errorf("embedded etcd: not ready after %s", timeout)
	case <-ctx.Done():
		return fmt.Errorf("embedded etcd: waiting for ready: %w", context.Cause(ctx))
	}
}

// waitClusterVersion waits until a clustered member knows the cluster
// version. etcd reports ready once the member has published itself, but
// the leader decides the version of a new cluster a moment later, in its
// own goroutine; until then the member's /version (on its peer URL) says
// "not_decided", and a member joining in that moment refuses the cluster
// for good ("incompatible with current running cluster": etcd's join
// check compares it with every other member's, and an undecided one is
// no version at all). A second server started right after the first
// reported ready would hit it (session 14's CI failure of
// TestClusterMembers); waiting here keeps "ready" meaning "can be joined".
func waitClusterVersion(ctx context.Context, e *embed.Etcd, deadline time.Time) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for e.Server.ClusterVersion() == nil {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("embedded etcd: waiting for the cluster version: %w", context.Cause(ctx))
		case err := <-e.Err():
			return fmt.Errorf("embedded etcd: serving failed before the cluster version was decided: %w", err)
		case <-e.Server.StopNotify():
			return errors.New("embedded etcd: server stopped before the cluster version was decided")
		}
		if time.Now().After(deadline) {
			return errors.New("embedded etcd: ready, but the cluster version is not decided by the start timeout")
		}
	}
	return nil
}

// Client returns the server's client (in-process for a single member: its
// Endpoints are empty; see newClient). It is closed by [Server.Close]; do
// not close it yourself.
func (s *Server) Client() *clientv3.Client { return s.client }

// SerializableReadsLinearizable reports whether a serializable read
// through [Server.Client] is also linearizable: true for a single member
// (no Config.Cluster). Its only member applies every write before
// acknowledging it (through this client or the socket alike) and no other
// member can hold newer data, so the member's applied state is the
// latest; a serializable read skips the ReadIndex confirmation through
// raft, which a single member gives itself but only after the writes
// queued before it in its raft loop were fsynced (see
// etcd3.Config.LocalReads).
func (s *Server) SerializableReadsLinearizable() bool { return s.single }

// Endpoints returns the endpoints to build another client with: the
// "unix://" path of the client socket.
func (s *Server) Endpoints() []string { return []string{s.endpoint} }

// ReadyIn returns how long Start took from its call to readiness.
func (s *Server) ReadyIn() time.Duration { return s.readyIn }

// Err reports errors of etcd's serving goroutines after start; it is closed
// when the server is closed.
func (s *Server) Err() <-chan error { return s.etcd.Err() }

// Close closes the client, then stops etcd cleanly (pending client requests
// are cut off after etcd's request timeout) and waits for it. Call it last,
// after everything using the client is done. It is safe to call more than
// once and from several goroutines.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		if err := s.client.Close(); err != nil && !errors.Is(err, context.Canceled) {
			s.logger.Warn("closing embedded etcd client", "err", err)
		}
		s.closing.Store(true)
		s.etcd.Close()
		if err := s.sockets.remove(); err != nil {
			s.logger.Warn("closing embedded etcd", "err", err)
		}
		s.logger.Info("embedded etcd stopped")
	})
}
