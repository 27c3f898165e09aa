package options

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Join tokens (issue 20). A token reads
//
//	K10<ca-hash>::server:<secret>
//
// as k3s's: ca-hash is the hex SHA-256 of the cluster CA certificate (DER),
// which a joining server pins before it sends anything secret; secret is
// 32 random bytes in hex, which the servers of the cluster check.
const (
	JoinTokenPrefix    = "K10"
	joinTokenSeparator = "::server:"
)

// JoinToken is a parsed join token.
type JoinToken struct {
	// CAHash is the SHA-256 of the cluster CA certificate's DER bytes.
	CAHash [sha256.Size]byte
	// Secret is the shared secret, hex.
	Secret string
}

// ParseJoinToken parses a token of the form K10<ca-hash>::server:<secret>.
func ParseJoinToken(s string) (JoinToken, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), JoinTokenPrefix)
	if !ok {
		return JoinToken{}, fmt.Errorf("join token does not start with %q", JoinTokenPrefix)
	}
	hash, secret, ok := strings.Cut(rest, joinTokenSeparator)
	if !ok {
		return JoinToken{}, fmt.Errorf("join token has no %q part", joinTokenSeparator)
	}
	var t JoinToken
	b, err := hex.DecodeString(hash)
	if err != nil || len(b) != sha256.Size {
		return JoinToken{}, errors.New("join token: the CA hash is not 64 hex digits")
	}
	copy(t.CAHash[:], b)
	if len(secret) < 32 {
		return JoinToken{}, errors.New("join token: the secret is shorter than 32 characters")
	}
	t.Secret = secret
	return t, nil
}

// String formats the token.
func (t JoinToken) String() string {
	return JoinTokenPrefix + hex.EncodeToString(t.CAHash[:]) + joinTokenSeparator + t.Secret
}

// ClusterOptions make kapi servers form their own etcd cluster from their
// embedded etcd: --cluster-init starts the first server, --join adds
// another through a running one.
type ClusterOptions struct {
	// Init is --cluster-init.
	Init bool
	// Join is --join: the https URL of a running server of the cluster.
	Join string
	// Token is --token: the join token (the first server's
	// <data-dir>/join-token).
	Token string
	// PeerAddress and ClientAddress are where this server's etcd listens
	// for its peers and for other servers' clients (host:port, advertised
	// as given).
	PeerAddress   string
	ClientAddress string
	// MemberName is this server's etcd member name (empty: the host name
	// and a random suffix, kept in the data dir).
	MemberName string
	// SocketReusePort is --etcd-socket-reuse-port: SO_REUSEPORT on the
	// embedded etcd's peer and client listeners (etcd's
	// --socket-reuse-port).
	SocketReusePort bool
}

// NewClusterOptions returns the defaults: no cluster, etcd's usual ports on
// loopback.
func NewClusterOptions() *ClusterOptions {
	return &ClusterOptions{PeerAddress: "127.0.0.1:2380", ClientAddress: "127.0.0.1:2379"}
}

// AddFlags adds the cluster flags to fs.
func (o *ClusterOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Init, "cluster-init", o.Init, "Start the first server of a new cluster of kapi servers: the embedded etcd listens for peers on --etcd-peer-address and for other servers on --etcd-client-address (mutual TLS with the cluster's etcd CA), and the join token is written to <data-dir>/join-token.")
	fs.StringVar(&o.Join, "join", o.Join, "Join the cluster of the kapi server at this URL (https://host:port, its secure port) as another etcd member, with --token. Only needed the first time: a restarted server rejoins from its data dir.")
	fs.StringVar(&o.Token, "token", o.Token, "The join token for --join (the <data-dir>/join-token file of a server of the cluster).")
	fs.StringVar(&o.PeerAddress, "etcd-peer-address", o.PeerAddress, "With --cluster-init or --join: host:port the embedded etcd listens on and advertises for its peers.")
	fs.StringVar(&o.ClientAddress, "etcd-client-address", o.ClientAddress, "With --cluster-init or --join: host:port the embedded etcd listens on and advertises for clients of other servers (kapi etcd member, etcd tools), mutual TLS.")
	fs.BoolVar(&o.SocketReusePort, "etcd-socket-reuse-port", o.SocketReusePort, "For a cluster member's embedded etcd (--cluster-init, --join, or a data dir that joined a cluster): set SO_REUSEPORT on its peer and client listeners (etcd's --socket-reuse-port), which allows another listener that sets it too to bind the same address and port.")
	fs.StringVar(&o.MemberName, "etcd-member-name", o.MemberName, "With --cluster-init or --join: this server's etcd member name, unique in the cluster (default: the host name and a random suffix).")
}

// Clustered reports whether a flag asks for a clustered embedded etcd.
func (o *ClusterOptions) Clustered() bool { return o.Init || o.Join != "" }

// Validate checks the flags; embedded says whether kapi runs its own etcd.
func (o *ClusterOptions) Validate(embedded bool) []error {
	var errs []error
	if o.Init && o.Join != "" {
		errs = append(errs, errors.New("--cluster-init and --join are exclusive: the first server initializes the cluster, the others join it"))
	}
	if o.Clustered() && !embedded {
		errs = append(errs, errors.New("--cluster-init and --join form a cluster of embedded etcd members; they can not be used with --etcd-servers or --storage-backend=memory"))
	}
	if o.Join != "" {
		u, err := url.Parse(o.Join)
		if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			errs = append(errs, fmt.Errorf("--join: %q is not an https://host:port URL", o.Join))
		}
		if o.Token == "" {
			errs = append(errs, errors.New("--join needs --token (the <data-dir>/join-token of a server of the cluster)"))
		}
	}
	if o.Token != "" {
		if o.Join == "" {
			errs = append(errs, errors.New("--token is only used with --join"))
		} else if _, err := ParseJoinToken(o.Token); err != nil {
			errs = append(errs, fmt.Errorf("--token: %w", err))
		}
	}
	if o.Clustered() {
		for _, a := range []struct{ flag, v string }{{"--etcd-peer-address", o.PeerAddress}, {"--etcd-client-address", o.ClientAddress}} {
			if err := validateAdvertised(a.v); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", a.flag, err))
			}
		}
		if o.PeerAddress == o.ClientAddress {
			errs = append(errs, errors.New("--etcd-peer-address and --etcd-client-address must differ"))
		}
		if strings.ContainsAny(o.MemberName, "=, \t\n") {
			errs = append(errs, fmt.Errorf("--etcd-member-name %q must not contain '=', ',' or spaces", o.MemberName))
		}
	}
	return errs
}

// validateAdvertised checks an address others dial: host:port with a
// concrete host and port.
func validateAdvertised(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %w", addr, err)
	}
	if host == "" {
		return fmt.Errorf("%q has no host (it is advertised to the other servers)", addr)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("%q: an unspecified address can not be advertised to the other servers", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return fmt.Errorf("%q: port must be 1-65535", addr)
	}
	return nil
}

// EtcdMemberOptions are the flags of `kapi etcd member list|remove`: the
// data dir of a clustered kapi server, whose membership (cluster.json) and
// etcd member certificate (in the cert dir) reach the cluster's etcd.
type EtcdMemberOptions struct {
	DataDir string
	CertDir string
}

// NewEtcdMemberOptions returns the defaults (kapi's --data-dir).
func NewEtcdMemberOptions() *EtcdMemberOptions {
	return &EtcdMemberOptions{DataDir: "./kapi-data"}
}

// AddFlags adds --data-dir and --cert-dir.
func (o *EtcdMemberOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "The data directory of a kapi server of the cluster (started with --cluster-init or --join). The server need not run: the other members are dialled too.")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "That server's --cert-dir (default <data-dir>/pki).")
}

// Validate checks the flags.
func (o *EtcdMemberOptions) Validate() []error {
	if o.DataDir == "" {
		return []error{errors.New("--data-dir is required")}
	}
	return nil
}
