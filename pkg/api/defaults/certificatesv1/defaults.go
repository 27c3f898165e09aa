package certificatesv1

import (
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultMaxExpirationSeconds is spec.maxExpirationSeconds when omitted
// (24 hours).
const DefaultMaxExpirationSeconds int32 = 86400

// RegisterDefaults registers the defaulters of PodCertificateRequest and
// its list on s.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&certificatesv1.PodCertificateRequest{}, func(obj any) {
		SetObjectDefaults_PodCertificateRequest(obj.(*certificatesv1.PodCertificateRequest))
	})
	s.AddTypeDefaultingFunc(&certificatesv1.PodCertificateRequestList{}, func(obj any) {
		l := obj.(*certificatesv1.PodCertificateRequestList)
		for i := range l.Items {
			SetObjectDefaults_PodCertificateRequest(&l.Items[i])
		}
	})
	return nil
}

// SetObjectDefaults_PodCertificateRequest defaults
// spec.maxExpirationSeconds to 86400.
func SetObjectDefaults_PodCertificateRequest(obj *certificatesv1.PodCertificateRequest) {
	if obj.Spec.MaxExpirationSeconds == nil {
		v := DefaultMaxExpirationSeconds
		obj.Spec.MaxExpirationSeconds = &v
	}
}
