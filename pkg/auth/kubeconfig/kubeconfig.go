package kubeconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

	write := func() error {
		// Encoding takes ~0.3 ms (JSON, then YAML): done with the write.
		data, err := clientcmd.Write(*cfg)
		if err != nil {
			return fmt.Errorf("encode admin kubeconfig: %w", err)
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
