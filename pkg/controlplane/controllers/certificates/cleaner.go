package certificates

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"log/slog"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certinformers "k8s.io/client-go/informers/certificates/v1"
	"k8s.io/client-go/kubernetes"
)

// The cleaner's durations (upstream's cleaner.go).
const (
	// CleanerInterval is how often every request is looked at.
	CleanerInterval = time.Hour
	// issuedExpiration: an approved, issued request is deleted an hour
	// after approval.
	issuedExpiration = time.Hour
	// deniedExpiration: a denied or failed one an hour after the
	// condition.
	deniedExpiration = time.Hour
	// pendingExpiration: one neither approved nor denied a day after its
	// creation.
	pendingExpiration = 24 * time.Hour
)

type cleaner struct {
	client kubernetes.Interface
	now    func() time.Time
}

// NewCleaner returns the csrcleaner controller, looking at every request
// each interval (0: [CleanerInterval]).
func NewCleaner(client kubernetes.Interface, csrs certinformers.CertificateSigningRequestInformer, logger *slog.Logger, interval time.Duration) (*Controller, error) {
	if interval <= 0 {
		interval = CleanerInterval
	}
	c := &cleaner{client: client, now: time.Now}
	return newController("csrcleaner", client, csrs, logger, interval, c.handle, false)
}

func (c *cleaner) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	if !Expired(csr, c.now()) {
		return nil
	}
	uid := csr.UID
	err := c.client.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("unable to delete CSR %q: %w", csr.Name, err)
	}
	return nil
}

// Expired reports whether the cleaner deletes csr at now.
func Expired(csr *certificatesv1.CertificateSigningRequest, now time.Time) bool {
	older := func(t metav1.Time, d time.Duration) bool { return !t.IsZero() && t.Add(d).Before(now) }
	issued := len(csr.Status.Certificate) > 0
	approved, denied := approval(csr)
	for _, cond := range csr.Status.Conditions {
		switch cond.Type {
		case certificatesv1.CertificateApproved:
			if issued && older(cond.LastUpdateTime, issuedExpiration) {
				return true
			}
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			if older(cond.LastUpdateTime, deniedExpiration) {
				return true
			}
		}
	}
	if !approved && !denied && older(csr.CreationTimestamp, pendingExpiration) {
		return true
	}
	return approved && issued && certificateExpired(csr.Status.Certificate, now)
}

// certificateExpired reports whether a certificate of the PEM data has
// expired.
func certificateExpired(data []byte, now time.Time) bool {
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			return false
		}
		if block.Type == "CERTIFICATE" {
			if certs, err := x509.ParseCertificates(block.Bytes); err == nil {
				for _, c := range certs {
					if now.After(c.NotAfter) {
						return true
					}
				}
			}
		}
		data = rest
	}
}
