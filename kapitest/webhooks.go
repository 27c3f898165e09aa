package kapitest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// WebhookInstallOptions are webhook configurations Start installs, pointed
// at a webhook server the test runs on this machine, as envtest's
// WebhookInstallOptions: every webhook that calls a Service gets the URL
// https://<LocalServingHost(ExternalName)>:<LocalServingPort>/<service
// path> instead, and every webhook gets the CA of a generated serving
// certificate (LocalServingCertDir/tls.crt, tls.key) as caBundle. Start
// fills in the Local* fields it chose, for the test's webhook server.
type WebhookInstallOptions struct {
	// Paths are files or directories of webhook configuration manifests
	// (Mutating- and ValidatingWebhookConfiguration documents; others
	// are skipped).
	Paths []string
	// MutatingWebhooks and ValidatingWebhooks are configurations to
	// install besides those in Paths.
	MutatingWebhooks   []*admissionv1.MutatingWebhookConfiguration
	ValidatingWebhooks []*admissionv1.ValidatingWebhookConfiguration
	// IgnoreErrorIfPathMissing skips paths that do not exist.
	IgnoreErrorIfPathMissing bool
	// LocalServingHost is the address the webhook server listens on
	// (default 127.0.0.1); LocalServingPort its port (default: a free
	// one); LocalServingHostExternalName, if set, the host name in the
	// webhook URLs instead of LocalServingHost.
	LocalServingHost             string
	LocalServingPort             int
	LocalServingHostExternalName string
	// LocalServingCertDir receives tls.crt and tls.key, the webhook
	// server's serving pair (default: a directory of the server's);
	// LocalServingCAData is set to the PEM of the CA that signed it.
	LocalServingCertDir string
	LocalServingCAData  []byte
	// MaxTime bounds the wait for the configurations to be readable
	// (default 10s).
	MaxTime time.Duration
}

// WithWebhooks installs webhook configurations once the server is ready
// (see WebhookInstallOptions); Start fills in o's Local* fields.
func WithWebhooks(o *WebhookInstallOptions) Option {
	return func(opts *Options) { opts.WebhookInstall = o }
}

// prepare chooses the local serving address, writes the serving pair and
// reads the manifests; the configurations are rewritten in place.
func (o *WebhookInstallOptions) prepare(defaultCertDir string) error {
	if o.LocalServingHost == "" {
		o.LocalServingHost = "127.0.0.1"
	}
	if o.LocalServingPort == 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(o.LocalServingHost, "0"))
		if err != nil {
			return fmt.Errorf("pick a webhook serving port: %w", err)
		}
		o.LocalServingPort = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
	}
	if o.LocalServingCertDir == "" {
		o.LocalServingCertDir = defaultCertDir
	}
	if err := o.writeServingPair(); err != nil {
		return err
	}
	if err := o.readPaths(); err != nil {
		return err
	}
	host := o.LocalServingHostExternalName
	if host == "" {
		host = o.LocalServingHost
	}
	hostPort := net.JoinHostPort(host, strconv.Itoa(o.LocalServingPort))
	for _, c := range o.MutatingWebhooks {
		for i := range c.Webhooks {
			pointAt(&c.Webhooks[i].ClientConfig, hostPort, o.LocalServingCAData)
		}
	}
	for _, c := range o.ValidatingWebhooks {
		for i := range c.Webhooks {
			pointAt(&c.Webhooks[i].ClientConfig, hostPort, o.LocalServingCAData)
		}
	}
	return nil
}

// pointAt sends a Service webhook to the local server (as envtest's
// updateClientConfig: the service path becomes the URL path).
func pointAt(cc *admissionv1.WebhookClientConfig, hostPort string, ca []byte) {
	cc.CABundle = ca
	if cc.Service != nil {
		path := ""
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		u := "https://" + hostPort + "/" + trimSlash(path)
		cc.URL = &u
		cc.Service = nil
	}
}

func trimSlash(p string) string {
	for len(p) > 0 && p[0] == '/' {
		p = p[1:]
	}
	return p
}

// writeServingPair generates a CA and a serving certificate for the
// local host names, writes tls.crt and tls.key, and sets
// LocalServingCAData.
func (o *WebhookInstallOptions) writeServingPair() error {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kapitest-webhook-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("webhook CA: %w", err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kapitest-webhook"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"},
	}
	for _, h := range []string{o.LocalServingHost, o.LocalServingHostExternalName} {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	tmpl.IPAddresses = append(tmpl.IPAddresses, net.IPv4(127, 0, 0, 1), net.IPv6loopback)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("webhook serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.LocalServingCertDir, 0o700); err != nil {
		return fmt.Errorf("webhook cert dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.LocalServingCertDir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("write webhook serving certificate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(o.LocalServingCertDir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return fmt.Errorf("write webhook serving key: %w", err)
	}
	o.LocalServingCAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return nil
}

// readPaths adds the configurations in Paths.
func (o *WebhookInstallOptions) readPaths() error {
	for _, p := range o.Paths {
		files, err := manifestFiles(p, !o.IgnoreErrorIfPathMissing)
		if err != nil {
			return fmt.Errorf("webhook path: %w", err)
		}
		for _, f := range files {
			err := eachDocument(f, func(kind, apiVersion string, doc []byte) error {
				if apiVersion != admissionv1.SchemeGroupVersion.String() {
					return nil
				}
				switch kind {
				case "MutatingWebhookConfiguration":
					c := &admissionv1.MutatingWebhookConfiguration{}
					if err := yaml.UnmarshalStrict(doc, c); err != nil {
						return err
					}
					o.MutatingWebhooks = append(o.MutatingWebhooks, c)
				case "ValidatingWebhookConfiguration":
					c := &admissionv1.ValidatingWebhookConfiguration{}
					if err := yaml.UnmarshalStrict(doc, c); err != nil {
						return err
					}
					o.ValidatingWebhooks = append(o.ValidatingWebhooks, c)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("read webhook configurations from %s: %w", f, err)
			}
		}
	}
	return nil
}

// installWebhooks creates (or replaces) the configurations and waits until
// each can be read back.
func (s *Server) installWebhooks(o *WebhookInstallOptions) error {
	if o == nil {
		return nil
	}
	if err := o.prepare(filepath.Join(s.DataDir(), "webhook-certs")); err != nil {
		return err
	}
	wait := o.MaxTime
	if wait <= 0 {
		wait = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	api := kubernetes.NewForConfigOrDie(s.Config).AdmissionregistrationV1()
	for _, c := range o.MutatingWebhooks {
		c = c.DeepCopy()
		c.ResourceVersion = ""
		_, err := api.MutatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var cur *admissionv1.MutatingWebhookConfiguration
			if cur, err = api.MutatingWebhookConfigurations().Get(ctx, c.Name, metav1.GetOptions{}); err == nil {
				c.ResourceVersion = cur.ResourceVersion
				_, err = api.MutatingWebhookConfigurations().Update(ctx, c, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("install MutatingWebhookConfiguration %s: %w", c.Name, err)
		}
	}
	for _, c := range o.ValidatingWebhooks {
		c = c.DeepCopy()
		c.ResourceVersion = ""
		_, err := api.ValidatingWebhookConfigurations().Create(ctx, c, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var cur *admissionv1.ValidatingWebhookConfiguration
			if cur, err = api.ValidatingWebhookConfigurations().Get(ctx, c.Name, metav1.GetOptions{}); err == nil {
				c.ResourceVersion = cur.ResourceVersion
				_, err = api.ValidatingWebhookConfigurations().Update(ctx, c, metav1.UpdateOptions{})
			}
		}
		if err != nil {
			return fmt.Errorf("install ValidatingWebhookConfiguration %s: %w", c.Name, err)
		}
	}
	for _, c := range o.MutatingWebhooks {
		if _, err := api.MutatingWebhookConfigurations().Get(ctx, c.Name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("MutatingWebhookConfiguration %s not readable: %w", c.Name, err)
		}
	}
	for _, c := range o.ValidatingWebhooks {
		if _, err := api.ValidatingWebhookConfigurations().Get(ctx, c.Name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("ValidatingWebhookConfiguration %s not readable: %w", c.Name, err)
		}
	}
	return nil
}
