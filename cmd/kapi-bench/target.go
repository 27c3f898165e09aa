package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// defaultReferenceFlags start a kube-apiserver on loopback with a token
// for the benchmark's admin user and the service-account keys it requires.
// --advertise-address keeps it from choosing (and publishing in the
// kubernetes Service's endpoints) the machine's own non-loopback address;
// kube-apiserver refuses a loopback advertise address with its default
// (lease) endpoint reconciler ("cannot use public IP 127.0.0.1 with
// endpoint reconciler"), hence --endpoint-reconciler-type=none. Checked
// with kube-apiserver v1.37.2 (hack/build-reference.sh).
const defaultReferenceFlags = "--etcd-servers={etcd} --etcd-prefix={prefix} --bind-address=127.0.0.1 " +
	"--advertise-address=127.0.0.1 --endpoint-reconciler-type=none --secure-port={port} " +
	"--cert-dir={dir}/certs --token-auth-file={dir}/tokens.csv --authorization-mode=AlwaysAllow " +
	"--service-account-issuer=https://kubernetes.default.svc --service-account-key-file={dir}/sa.pem " +
	"--service-account-signing-key-file={dir}/sa.key --service-cluster-ip-range=10.0.0.0/24"

// benchToken is the reference's admin token (loopback only, a throwaway
// data dir).
const benchToken = "kapi-bench-admin-token"

// target is a server to measure: how to prepare its data dir and start it.
type target struct {
	name    string
	dir     string
	prepare func(dir string) error
	// command returns the command starting the server in dir and the
	// client config to reach it once it is up (nil: read later from
	// kubeconfig).
	command    func(dir string) (*exec.Cmd, *rest.Config, error)
	kubeconfig string // for kapi: written by the server
}

func kapiTarget(name, bin string, flags ...string) *target {
	t := &target{name: name}
	t.command = func(dir string) (*exec.Cmd, *rest.Config, error) {
		t.kubeconfig = filepath.Join(dir, "admin.kubeconfig")
		_ = os.Remove(t.kubeconfig)
		args := append([]string{"--data-dir", dir, "--secure-port", "0", "--bind-address", "127.0.0.1"}, flags...)
		return exec.Command(bin, args...), nil, nil
	}
	return t
}

func referenceTarget(name, bin, flagTemplate, etcd, prefix string) *target {
	t := &target{name: name}
	t.prepare = func(dir string) error {
		if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(benchToken+",kapi-bench,kapi-bench,\"system:masters\"\n"), 0o600); err != nil {
			return err
		}
		return writeServiceAccountKeys(dir)
	}
	t.command = func(dir string) (*exec.Cmd, *rest.Config, error) {
		port, err := freePort()
		if err != nil {
			return nil, nil, err
		}
		r := strings.NewReplacer("{etcd}", etcd, "{prefix}", prefix, "{port}", strconv.Itoa(port), "{dir}", dir)
		cfg := &rest.Config{
			Host:            "https://127.0.0.1:" + strconv.Itoa(port),
			BearerToken:     benchToken,
			TLSClientConfig: rest.TLSClientConfig{Insecure: true}, // its self-signed loopback certificate
		}
		return exec.Command(bin, strings.Fields(r.Replace(flagTemplate))...), cfg, nil
	}
	return t
}

func writeServiceAccountKeys(dir string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pem"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// proc is a running server.
type proc struct {
	cmd    *exec.Cmd
	cfg    *rest.Config
	ready  time.Duration // from exec to the first 200 from /readyz
	exited chan error
	// transport is the clients' (client-go caches one per config).
	transport http.RoundTripper
}

// start starts t in its data dir and waits for /readyz.
func (t *target) start(ctx context.Context) (*proc, error) {
	cmd, cfg, err := t.command(t.dir)
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(t.dir, "server.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	p := &proc{cmd: cmd, exited: make(chan error, 1)}
	go func() { p.exited <- cmd.Wait(); log.Close() }()
	deadline := time.Now().Add(2 * time.Minute)
	var client *http.Client
	for {
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("not ready within 2m (log: %s)", filepath.Join(t.dir, "server.log"))
		}
		select {
		case err := <-p.exited:
			return nil, fmt.Errorf("exited before ready: %v (log: %s)", err, filepath.Join(t.dir, "server.log"))
		default:
		}
		if cfg == nil {
			if c, err := clientcmd.BuildConfigFromFlags("", t.kubeconfig); err == nil && c.Host != "" {
				cfg = c
			}
		}
		if cfg != nil && client == nil {
			rt, err := rest.TransportFor(cfg)
			if err != nil {
				p.kill()
				return nil, err
			}
			client = &http.Client{Transport: rt, Timeout: time.Second}
		}
		if client != nil {
			if resp, err := client.Get(cfg.Host + "/readyz"); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					p.ready = time.Since(begin)
					cfg.QPS, cfg.Burst = -1, 0
					p.cfg, p.transport = cfg, client.Transport
					return p, nil
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stop sends SIGTERM and returns the time until the process exited. The
// benchmark's idle connections are closed first, as a client that is done
// closes them: an HTTP/2 connection left idle gets the server's GOAWAY,
// which Go's client ignores, and the server (kapi and kube-apiserver alike)
// then waits x/net/http2's one-second GOAWAY timeout before exiting, which
// measures the client rather than the server.
func (p *proc) stop() (time.Duration, error) {
	if p.transport != nil {
		utilnet.CloseIdleConnectionsFor(p.transport)
	}
	begin := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, err
	}
	select {
	case <-p.exited:
		return time.Since(begin), nil
	case <-time.After(2 * time.Minute):
		p.kill()
		return 0, errors.New("did not exit within 2m of SIGTERM")
	}
}

func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
}

// rss is the process's resident set size in bytes.
func (p *proc) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpu is the process's user+system CPU time so far.
func (p *proc) cpu() time.Duration {
	return statCPU(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
}

// statCPU is the user+system CPU time in a /proc/PID/stat file (0 if it
// cannot be read).
func statCPU(path string) time.Duration {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) in parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}
