// Package authenticationv1 holds the defaulting of authentication.k8s.io/v1
// request bodies, as upstream's pkg/apis/authentication/v1/defaults.go
// (v1.37.2): a TokenRequest asks for an hour unless it says otherwise.
package authenticationv1

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultTokenExpirationSeconds is a TokenRequest's
// spec.expirationSeconds when omitted.
const DefaultTokenExpirationSeconds int64 = 60 * 60

// RegisterDefaults registers the TokenRequest defaulter on s, so that a
// decoded request body is defaulted before admission sees it.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&authenticationv1.TokenRequest{}, func(obj any) {
		SetObjectDefaults_TokenRequest(obj.(*authenticationv1.TokenRequest))
	})
	return nil
}

// SetObjectDefaults_TokenRequest defaults spec.expirationSeconds.
func SetObjectDefaults_TokenRequest(obj *authenticationv1.TokenRequest) {
	if obj.Spec.ExpirationSeconds == nil {
		v := DefaultTokenExpirationSeconds
		obj.Spec.ExpirationSeconds = &v
	}
}
