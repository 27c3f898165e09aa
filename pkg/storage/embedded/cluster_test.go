package embedded

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/kapi-dev/kapi/internal/testports"
)

// clusterPKI writes a CA and one certificate for 127.0.0.1 usable as TLS
// server and client (etcd peers dial each other), signed by it.
func clusterPKI(t *testing.T) (ca, cert, key string) {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test-etcd-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "member"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, cert, key = filepath.Join(dir, "ca.crt"), filepath.Join(dir, "member.crt"), filepath.Join(dir, "member.key")
	for path, block := range map[string]*pem.Block{
		ca:   {Type: "CERTIFICATE", Bytes: caDER},
		cert: {Type: "CERTIFICATE", Bytes: leafDER},
		key:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ca, cert, key
}

// reservedURL is https://127.0.0.1:<port> on a port reserved for the
// test's whole run (internal/testports): the member binds it with
// Cluster.ReusePort, at its start and at a restart, and no other process
// can take it before or in between.
func reservedURL(t *testing.T) url.URL {
	t.Helper()
	return url.URL{Scheme: "https", Host: "127.0.0.1:" + strconv.Itoa(testports.Reserve(t))}
}

// TestClusterMembers: three embedded servers with Config.Cluster form one
// etcd cluster over mutual TLS on loopback (the first bootstraps it, the
// others are added with MemberAdd and join); a write through one is read
// through another; with the first stopped the other two serve; restarted
// on its data it rejoins; a member is removed.
func TestClusterMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("forms a three-member cluster")
	}
	ctx := t.Context()
	ca, cert, key := clusterPKI(t)
	base := t.TempDir()
	type member struct {
		cfg Config
		srv *Server
	}
	members := make([]*member, 3)
	initial := ""
	for i := range members {
		name := "m" + strconv.Itoa(i)
		peer, client := reservedURL(t), reservedURL(t)
		if initial != "" {
			initial += ","
		}
		initial += name + "=" + peer.String()
		members[i] = &member{cfg: Config{DataDir: filepath.Join(base, name), Logger: quietLogger(), UnsafeNoFsync: true, Cluster: &Cluster{
			Name: name, PeerURL: peer, ClientURL: client, CertFile: cert, KeyFile: key, CAFile: ca,
			InitialCluster: initial, Join: i > 0, ReusePort: true,
		}}}
		if i > 0 {
			// etcd refuses to add a member until the members it would
			// need for a quorum have been connected for 5 s
			// (StrictReconfigCheck's "unhealthy cluster").
			deadline := time.Now().Add(30 * time.Second)
			for {
				_, err := members[0].srv.Client().MemberAdd(ctx, []string{peer.String()})
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("add %s: %v", name, err)
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
		srv, err := Start(ctx, members[i].cfg)
		if err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		members[i].srv = srv
		if srv.SerializableReadsLinearizable() {
			t.Errorf("%s, a member of a cluster, claims linearizable serializable reads", name)
		}
		t.Cleanup(func() {
			if members[i].srv != nil {
				members[i].srv.Close()
			}
		})
	}
	list, err := members[2].srv.Client().MemberList(ctx)
	if err != nil || len(list.Members) != 3 {
		t.Fatalf("member list: %v %v", list, err)
	}
	if _, err := members[0].srv.Client().Put(ctx, "/registry/a", "1"); err != nil {
		t.Fatal(err)
	}
	got, err := members[2].srv.Client().Get(ctx, "/registry/a")
	if err != nil || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "1" {
		t.Fatalf("read through another member: %v %v", got, err)
	}

	// Remote clients need a certificate of the cluster CA.
	remote := members[1].cfg.Cluster.ClientURL.String()
	withCert, err := (&transport.TLSInfo{CertFile: cert, KeyFile: key, TrustedCAFile: ca}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{remote}, TLS: withCert, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Get(ctx, "/registry/a"); err != nil {
		t.Errorf("remote client with a certificate: %v", err)
	}
	cli.Close()
	caOnly, err := (&transport.TLSInfo{TrustedCAFile: ca}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	anon, err := clientv3.New(clientv3.Config{Endpoints: []string{remote}, TLS: caOnly, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	actx, cancel := contextWithTimeout(t, 3*time.Second)
	if _, err := anon.Get(actx, "/registry/a"); err == nil {
		t.Error("a remote client without a certificate was served")
	}
	cancel()
	anon.Close()

	// The first member stops: the two others keep a quorum.
	members[0].srv.Close()
	members[0].srv = nil
	wctx, cancel := contextWithTimeout(t, 15*time.Second)
	if _, err := members[1].srv.Client().Put(wctx, "/registry/b", "2"); err != nil {
		t.Fatalf("write with the first member down: %v", err)
	}
	cancel()
	// Restarted on its data (and its reserved ports), it rejoins and
	// catches up.
	srv, err := Start(ctx, members[0].cfg)
	if err != nil {
		t.Fatalf("restart m0: %v", err)
	}
	members[0].srv = srv
	got, err = srv.Client().Get(ctx, "/registry/b")
	if err != nil || len(got.Kvs) != 1 {
		t.Fatalf("read through the restarted member: %v %v", got, err)
	}

	// A member is removed.
	id := uint64(0)
	for _, m := range list.Members {
		if m.Name == "m2" {
			id = m.ID
		}
	}
	// Retried for the same reason as MemberAdd: m0 just came back.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := members[0].srv.Client().MemberRemove(ctx, id)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("remove m2: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	members[2].srv.Close()
	members[2].srv = nil
	list, err = members[0].srv.Client().MemberList(ctx)
	if err != nil || len(list.Members) != 2 {
		t.Fatalf("member list after remove: %v %v", list, err)
	}
}

// TestClusterVersionDecidedAtReady: a clustered member is ready only once
// it knows the cluster version, which a member joining it checks (an
// undecided one made the join fail with "incompatible with current running
// cluster"). Before Start waited for it, most starts of a new one-member
// cluster returned with the version undecided (14 of 20 under -race).
func TestClusterVersionDecidedAtReady(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a clustered member")
	}
	ca, cert, key := clusterPKI(t)
	peer, client := reservedURL(t), reservedURL(t)
	cfg := Config{DataDir: filepath.Join(t.TempDir(), "m0"), Logger: quietLogger(), UnsafeNoFsync: true, Cluster: &Cluster{
		Name: "m0", PeerURL: peer, ClientURL: client, CertFile: cert, KeyFile: key, CAFile: ca,
		InitialCluster: "m0=" + peer.String(), ReusePort: true}}
	srv, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if v := srv.etcd.Server.ClusterVersion(); v == nil {
		t.Error("ready with the cluster version undecided: a member joining now is refused")
	}
}

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}
