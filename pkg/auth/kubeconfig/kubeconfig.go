package kubeconfig

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Names inside the admin kubeconfig.
const (
	ClusterName = "kapi"
	UserName    = "kapi-admin"
	ContextName = "kapi"
)

// WriteAdmin writes a kubeconfig for server (an https:// URL) to path,
// with cluster "kapi", user "kapi-admin" and current context "kapi". The CA
// and the client certificate and key are embedded as data. The file has
// mode 0600 and is replaced atomically; its directory is created (0755) if
// needed.
func WriteAdmin(path, server string, caPEM, certPEM, keyPEM []byte) error {
	return WriteAdminDeferred(path, server, caPEM, certPEM, keyPEM, nil)
}

// WriteAdminDeferred is WriteAdmin handing the encoding and the write of
// the file (its directory's creation included) to deferWrite, which the
// caller must run before anything reads it; nil writes it before
// returning. Errors of the arguments are returned at once.
func WriteAdminDeferred(path, server string, caPEM, certPEM, keyPEM []byte, deferWrite func(write func() error)) error {
	if path == "" {
		return errors.New("write admin kubeconfig: empty path")
	}
	if server == "" {
		return fmt.Errorf("write admin kubeconfig %s: empty server URL", path)
	}
	cfg := adminConfig(server, caPEM, certPEM, keyPEM)

	write := func() error {
		data, ok := encodeAdmin(server, caPEM, certPEM, keyPEM)
		if !ok {
			// Encoding takes ~0.5 ms (conversion, JSON, then YAML):
			// done with the write.
			var err error
			if data, err = clientcmd.Write(*cfg); err != nil {
				return fmt.Errorf("encode admin kubeconfig: %w", err)
			}
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("write admin kubeconfig: %w", err)
		}
		if err := writeFileAtomic(path, data, 0o600); err != nil {
			return fmt.Errorf("write admin kubeconfig: %w", err)
		}
		return nil
	}
	if deferWrite != nil {
		deferWrite(write)
		return nil
	}
	return write()
}

// AdminRESTConfig is the client config that loading the kubeconfig
// WriteAdmin writes for the same arguments gives
// (clientcmd.BuildConfigFromFlags("", path)), made from the data without
// the file: the read and YAML decode cost ~1,100 allocations and ~0.3 ms
// of a kapitest Start. TestAdminRESTConfigAsLoaded holds the two equal.
func AdminRESTConfig(server string, caPEM, certPEM, keyPEM []byte) (*rest.Config, error) {
	return clientcmd.NewDefaultClientConfig(*adminConfig(server, caPEM, certPEM, keyPEM), &clientcmd.ConfigOverrides{}).ClientConfig()
}

// writeFileAtomic replaces path with data through a temporary file in the
// same directory, so readers never see a partial file.
func writeFileAtomic(path string, data []byte, mode os.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(mode); err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// adminConfig is the admin kubeconfig of server.
func adminConfig(server string, caPEM, certPEM, keyPEM []byte) *clientcmdapi.Config {
	cfg := clientcmdapi.NewConfig()
	cluster := clientcmdapi.NewCluster()
	cluster.Server = server
	cluster.CertificateAuthorityData = caPEM
	cfg.Clusters[ClusterName] = cluster
	auth := clientcmdapi.NewAuthInfo()
	auth.ClientCertificateData = certPEM
	auth.ClientKeyData = keyPEM
	cfg.AuthInfos[UserName] = auth
	kctx := clientcmdapi.NewContext()
	kctx.Cluster = ClusterName
	kctx.AuthInfo = UserName
	cfg.Contexts[ContextName] = kctx
	cfg.CurrentContext = ContextName
	return cfg
}

// encodeAdmin writes the admin kubeconfig's YAML directly: the bytes
// clientcmd.Write makes of the Config WriteAdminDeferred builds (its
// conversion to v1, JSON, then YAML cost ~0.5 ms of every start's CPU,
// docs/performance-history.md, "Session 18: start → ready on memory"), for the
// servers and data it knows YAML prints as plain scalars: an https URL
// of letters, digits and ".-:[]" (a host name, an IPv4 or a bracketed
// IPv6 address, a port), and non-empty PEM data (base64 of "-----BEGIN"
// starts with "LS0t"). false for anything else, which the caller encodes
// with clientcmd.Write. TestEncodeAdminAsClientcmd holds the two equal.
func encodeAdmin(server string, caPEM, certPEM, keyPEM []byte) ([]byte, bool) {
	host, ok := strings.CutPrefix(server, "https://")
	if !ok || host == "" || len(caPEM) == 0 || len(certPEM) == 0 || len(keyPEM) == 0 {
		return nil, false
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == ':' || c == '[' || c == ']') {
			return nil, false
		}
	}
	enc := base64.StdEncoding
	b := make([]byte, 0, 400+len(server)+enc.EncodedLen(len(caPEM))+enc.EncodedLen(len(certPEM))+enc.EncodedLen(len(keyPEM)))
	b = append(b, "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: "...)
	b = enc.AppendEncode(b, caPEM)
	b = append(b, "\n    server: "...)
	b = append(b, server...)
	b = append(b, "\n  name: "+ClusterName+"\ncontexts:\n- context:\n    cluster: "+ClusterName+
		"\n    user: "+UserName+"\n  name: "+ContextName+"\ncurrent-context: "+ContextName+
		"\nkind: Config\nusers:\n- name: "+UserName+"\n  user:\n    client-certificate-data: "...)
	b = enc.AppendEncode(b, certPEM)
	b = append(b, "\n    client-key-data: "...)
	b = enc.AppendEncode(b, keyPEM)
	b = append(b, '\n')
	return b, true
}
