package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/pkg/auth/pki"
	"github.com/kapi-dev/kapi/pkg/server/options"
	"github.com/kapi-dev/kapi/pkg/storage/embedded"
)

// Files of a clustered server's data dir.
const (
	// clusterStateFile records this server's membership: it makes a
	// restarted server rejoin without --join and --token.
	clusterStateFile = "cluster.json"
	// joinTokenFile holds the join token (mode 0600).
	joinTokenFile = "join-token"
)

// clusterState is the content of <data-dir>/cluster.json.
type clusterState struct {
	// Name, PeerURL and ClientURL are this member's.
	Name      string `json:"name"`
	PeerURL   string `json:"peerURL"`
	ClientURL string `json:"clientURL"`
	// InitialCluster is the membership etcd starts with (name=peerURL,
	// comma-separated), used while its data dir is empty.
	InitialCluster string `json:"initialCluster"`
	// Join says the member joined an existing cluster (false: it
	// bootstrapped it with --cluster-init).
	Join bool `json:"join"`
	// ClientURLs are every member's client URLs as last seen (at start and
	// when joining): `kapi etcd member` dials them.
	ClientURLs []string `json:"clientURLs,omitempty"`
}

func loadClusterState(dataDir string) (*clusterState, error) {
	path := filepath.Join(dataDir, clusterStateFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cluster state: %w", err)
	}
	var s clusterState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("cluster state %s: %w", path, err)
	}
	if s.Name == "" || s.PeerURL == "" || s.ClientURL == "" || s.InitialCluster == "" {
		return nil, fmt.Errorf("cluster state %s: incomplete (name, peerURL, clientURL and initialCluster are required)", path)
	}
	return &s, nil
}

func (s *clusterState) save(dataDir string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dataDir, clusterStateFile), append(b, '\n'), 0o600)
}

// clusterMember is this server as a member of a cluster of kapi servers
// whose embedded etcds form one etcd cluster (issue 20).
type clusterMember struct {
	state   clusterState
	dataDir string
	certDir string
	etcd    *embedded.Cluster
	// token is the join token this server accepts ("" until written).
	token  string
	logger *slog.Logger
}

// applyCluster prepares a clustered embedded etcd, before the PKI and
// storage: with --join (the first time) it asks a server of the cluster to
// add this one as a member and receives the cluster's PKI; with
// --cluster-init it creates the etcd CA. A data dir that holds a
// cluster.json is clustered whatever the flags: a restarted server rejoins
// from it.
func (c *Config) applyCluster() error {
	o := c.Options.Cluster
	dataDir := c.Options.DataDir
	st, err := loadClusterState(dataDir)
	if err != nil {
		return err
	}
	if st == nil && !o.Clustered() {
		return nil
	}
	if !c.Options.Storage.Embedded() {
		return fmt.Errorf("%s holds the membership of a clustered embedded etcd (%s): it can not run with --etcd-servers or --storage-backend=memory", dataDir, clusterStateFile)
	}
	certDir := c.Options.SecureServing.CertDir
	logger := c.Logger.With("component", "cluster")
	if st == nil {
		if _, err := os.Stat(filepath.Join(dataDir, "etcd", "member")); err == nil {
			return fmt.Errorf("--cluster-init/--join: %s already holds the data of a single server's embedded etcd; turning it into a cluster member is not supported: save a snapshot of it (kapi etcd snapshot save), or start the cluster from a new --data-dir", filepath.Join(dataDir, "etcd"))
		}
		name := o.MemberName
		if name == "" {
			if name, err = defaultMemberName(); err != nil {
				return err
			}
		}
		st = &clusterState{Name: name, PeerURL: "https://" + o.PeerAddress, ClientURL: "https://" + o.ClientAddress}
		if o.Init {
			st.InitialCluster = name + "=" + st.PeerURL
			st.ClientURLs = []string{st.ClientURL}
			if _, _, err := ensureEtcdCA(certDir, true); err != nil {
				return err
			}
		} else {
			tok, err := options.ParseJoinToken(o.Token)
			if err != nil {
				return fmt.Errorf("--token: %w", err)
			}
			// Checked before the member is added: a member added but never
			// started blocks the next joins until it is removed.
			if err := checkCertDirFor(certDir, tok); err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), joinTimeout)
			resp, err := requestJoin(ctx, o.Join, tok, joinRequest{Name: name, PeerURL: st.PeerURL, ClientURL: st.ClientURL}, logger)
			cancel()
			if err != nil {
				return fmt.Errorf("--join %s: %w", o.Join, err)
			}
			if err := writeSharedPKI(certDir, resp.Files); err != nil {
				return fmt.Errorf("--join %s: %w", o.Join, err)
			}
			if err := writeFileAtomic(filepath.Join(dataDir, joinTokenFile), []byte(tok.String()+"\n"), 0o600); err != nil {
				return err
			}
			st.InitialCluster, st.ClientURLs, st.Join = resp.InitialCluster, resp.ClientURLs, true
			logger.Info("added to the cluster as an etcd learner", "server", o.Join, "member", name, "initialCluster", st.InitialCluster)
		}
		if err := st.save(dataDir); err != nil {
			return err
		}
	} else if o.Clustered() {
		logger.Info("the data dir already belongs to a cluster: --cluster-init, --join and the etcd addresses are taken from it", "state", filepath.Join(dataDir, clusterStateFile), "member", st.Name)
	}
	ca, caKey, err := ensureEtcdCA(certDir, false)
	if err != nil {
		return err
	}
	peer, err := url.Parse(st.PeerURL)
	if err != nil {
		return fmt.Errorf("cluster state: peer URL: %w", err)
	}
	client, err := url.Parse(st.ClientURL)
	if err != nil {
		return fmt.Errorf("cluster state: client URL: %w", err)
	}
	certFile, keyFile, err := writeMemberCert(certDir, st.Name, ca, caKey, peer.Host, client.Host)
	if err != nil {
		return err
	}
	m := &clusterMember{state: *st, dataDir: dataDir, certDir: certDir, logger: logger, etcd: &embedded.Cluster{
		Name: st.Name, PeerURL: *peer, ClientURL: *client,
		CertFile: certFile, KeyFile: keyFile, CAFile: filepath.Join(certDir, etcdCACertFile),
		InitialCluster: st.InitialCluster, Join: st.Join, ReusePort: o.SocketReusePort,
	}}
	if b, err := os.ReadFile(filepath.Join(dataDir, joinTokenFile)); err == nil {
		tok, err := options.ParseJoinToken(string(b))
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dataDir, joinTokenFile), err)
		}
		m.token = tok.String()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	c.cluster = m
	return nil
}

// joinTimeout bounds a join: the first server may still be starting, and
// etcd refuses a new member until the cluster has been healthy for 5 s.
const joinTimeout = 2 * time.Minute

// defaultMemberName is the host name and a random suffix: several servers
// may run on one host.
func defaultMemberName() (string, error) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "kapi"
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return host + "-" + hex.EncodeToString(b), nil
}

// clusterEtcd is the embedded etcd's cluster membership (nil: a single
// server).
func (c *Config) clusterEtcd() *embedded.Cluster {
	if c.cluster == nil {
		return nil
	}
	return c.cluster.etcd
}

// startCluster runs once the embedded etcd serves: the first server writes
// the join token, every server refreshes the client URLs it knows and
// answers joins on its secure port.
func (c *Config) startCluster() error {
	m := c.cluster
	if m == nil {
		return nil
	}
	tokenPath := filepath.Join(m.dataDir, joinTokenFile)
	if m.token == "" {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return err
		}
		tok := options.JoinToken{CAHash: sha256.Sum256(c.ClusterCA.Raw), Secret: hex.EncodeToString(secret)}
		if err := writeFileAtomic(tokenPath, []byte(tok.String()+"\n"), 0o600); err != nil {
			return fmt.Errorf("write the join token: %w", err)
		}
		m.token = tok.String()
	} else if t, err := options.ParseJoinToken(m.token); err != nil || t.CAHash != sha256.Sum256(c.ClusterCA.Raw) {
		return fmt.Errorf("%s does not belong to the cluster CA of %s (its CA hash differs)", tokenPath, m.certDir)
	}
	if err := m.promoteSelf(c.storage.client); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if list, err := c.storage.client.MemberList(ctx); err != nil {
		m.logger.Warn("listing the etcd members", "err", err)
	} else {
		m.state.ClientURLs = memberClientURLs(list.Members)
		if err := m.state.save(m.dataDir); err != nil {
			m.logger.Warn("saving the cluster state", "err", err)
		}
	}
	m.logger.Info("serving as an etcd cluster member; other servers join with: kapi --join https://<this server> --token <the token file's content>",
		"member", m.state.Name, "peerURL", m.state.PeerURL, "clientURL", m.state.ClientURL,
		"joinToken", tokenPath, "joinURL", "https://"+serverHost(c.Address))
	c.Generic.BuildHandlerChainFunc = m.wrapChain(c.Generic.BuildHandlerChainFunc, c)
	return nil
}

func memberClientURLs(members []*etcdserverpb.Member) []string {
	var out []string
	for _, m := range members {
		for _, u := range m.ClientURLs {
			if !slices.Contains(out, u) {
				out = append(out, u)
			}
		}
	}
	return out
}

// checkCertDirFor fails when certDir already holds a cluster CA other than
// the token's.
func checkCertDirFor(certDir string, tok options.JoinToken) error {
	path := filepath.Join(certDir, pki.CACertFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	block, _ := pem.Decode(b)
	if block == nil || sha256.Sum256(block.Bytes) != tok.CAHash {
		return fmt.Errorf("--join: %s holds another CA than the cluster's (the join token's CA hash differs): join with a new --data-dir (or --cert-dir)", path)
	}
	return nil
}

// promoteTimeout bounds the wait for a learner to catch up and be
// promoted.
const promoteTimeout = 90 * time.Second

// promoteSelf makes this member a voting member when it is still a
// learner (it joined as one, and may have stopped before its promotion).
// A learner answers no request but Status, so the promotion goes to the
// other members' client URLs, with this member's certificate. etcd
// promotes a learner only once its log caught up with the leader's.
func (m *clusterMember) promoteSelf(local *clientv3.Client) error {
	ctx, cancel := context.WithTimeout(context.Background(), promoteTimeout)
	defer cancel()
	status, err := local.Status(ctx, local.Endpoints()[0])
	if err != nil {
		return fmt.Errorf("embedded etcd status: %w", err)
	}
	if !status.IsLearner {
		return nil
	}
	id := status.Header.MemberId
	var others []string
	for _, u := range m.state.ClientURLs {
		if u != m.state.ClientURL {
			others = append(others, u)
		}
	}
	if len(others) == 0 {
		return fmt.Errorf("etcd member %s is a learner and no other member's client URL is known to promote it", m.state.Name)
	}
	tlsConfig, err := (&transport.TLSInfo{CertFile: m.etcd.CertFile, KeyFile: m.etcd.KeyFile, TrustedCAFile: m.etcd.CAFile}).ClientConfig()
	if err != nil {
		return err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: others, TLS: tlsConfig, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return fmt.Errorf("connect to the etcd members %v: %w", others, err)
	}
	defer cli.Close()
	start := time.Now()
	for {
		_, err := cli.MemberPromote(ctx, id)
		if err == nil || errors.Is(err, rpctypes.ErrMemberNotLearner) || errors.Is(err, rpctypes.ErrGRPCMemberNotLearner) {
			m.logger.Info("promoted from learner to voting etcd member", "member", m.state.Name, "after", time.Since(start))
			return nil
		}
		if errors.Is(err, rpctypes.ErrMemberNotFound) || errors.Is(err, rpctypes.ErrGRPCMemberNotFound) {
			return fmt.Errorf("etcd member %s (%x) was removed from the cluster before its promotion: start on a new data dir with --join", m.state.Name, id)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("promote etcd member %s (%x) from learner: %w", m.state.Name, id, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
