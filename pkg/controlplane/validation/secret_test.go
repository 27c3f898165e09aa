package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func secret(typ corev1.SecretType, data map[string][]byte, mut func(*corev1.Secret)) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", ResourceVersion: "1"},
		Type:       typ,
		Data:       data,
	}
	if mut != nil {
		mut(s)
	}
	return s
}

func TestValidateSecret(t *testing.T) {
	saAnnotated := func(s *corev1.Secret) {
		s.Annotations = map[string]string{corev1.ServiceAccountNameKey: "default"}
	}
	big := []byte(strings.Repeat("x", corev1.MaxSecretSize))
	cases := []struct {
		name string
		s    *corev1.Secret
		want []string
	}{
		{"opaque", secret(corev1.SecretTypeOpaque, map[string][]byte{"k": nil}, nil), nil},
		{"empty type", secret("", nil, nil), nil},
		{"custom type", secret("example.com/thing", nil, nil), nil},
		{"bad name", secret(corev1.SecretTypeOpaque, nil, func(s *corev1.Secret) { s.Name = "-x" }), []string{invalid + " metadata.name"}},
		{"bad key", secret(corev1.SecretTypeOpaque, map[string][]byte{"a/b": nil}, nil), []string{invalid + " data[a/b]"}},
		{"at the limit", secret(corev1.SecretTypeOpaque, map[string][]byte{"a": big}, nil), nil},
		{"over the limit", secret(corev1.SecretTypeOpaque, map[string][]byte{"a": big, "b": {1}}, nil), []string{tooLong + " data"}},
		{"sa token", secret(corev1.SecretTypeServiceAccountToken, nil, saAnnotated), nil},
		{"sa token without annotation", secret(corev1.SecretTypeServiceAccountToken, nil, nil),
			[]string{required + " metadata.annotations[kubernetes.io/service-account.name]"}},
		{"dockercfg", secret(corev1.SecretTypeDockercfg, map[string][]byte{".dockercfg": []byte(`{"r":{}}`)}, nil), nil},
		{"dockercfg missing", secret(corev1.SecretTypeDockercfg, nil, nil), []string{required + " data[.dockercfg]"}},
		{"dockercfg not json", secret(corev1.SecretTypeDockercfg, map[string][]byte{".dockercfg": []byte("{")}, nil),
			[]string{invalid + " data[.dockercfg]"}},
		{"dockercfg json array", secret(corev1.SecretTypeDockercfg, map[string][]byte{".dockercfg": []byte("[]")}, nil),
			[]string{invalid + " data[.dockercfg]"}},
		{"dockerconfigjson", secret(corev1.SecretTypeDockerConfigJson, map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}, nil), nil},
		{"dockerconfigjson missing", secret(corev1.SecretTypeDockerConfigJson, map[string][]byte{".dockercfg": []byte(`{}`)}, nil),
			[]string{required + " data[.dockerconfigjson]"}},
		{"dockerconfigjson not json", secret(corev1.SecretTypeDockerConfigJson, map[string][]byte{".dockerconfigjson": []byte("x")}, nil),
			[]string{invalid + " data[.dockerconfigjson]"}},
		{"basic-auth username only", secret(corev1.SecretTypeBasicAuth, map[string][]byte{"username": nil}, nil), nil},
		{"basic-auth password only", secret(corev1.SecretTypeBasicAuth, map[string][]byte{"password": {}}, nil), nil},
		{"basic-auth neither", secret(corev1.SecretTypeBasicAuth, map[string][]byte{"other": nil}, nil),
			[]string{required + " data[%s][username]", required + " data[%s][password]"}},
		{"ssh-auth", secret(corev1.SecretTypeSSHAuth, map[string][]byte{"ssh-privatekey": {1}}, nil), nil},
		{"ssh-auth empty key", secret(corev1.SecretTypeSSHAuth, map[string][]byte{"ssh-privatekey": {}}, nil),
			[]string{required + " data[%s][ssh-privatekey]"}},
		{"tls", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": nil, "tls.key": nil}, nil), nil},
		{"tls without both", secret(corev1.SecretTypeTLS, nil, nil),
			[]string{required + " data[tls.crt]", required + " data[tls.key]"}},
		{"tls without key", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": {1}}, nil), []string{required + " data[tls.key]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateSecret(tc.s), tc.want...)
		})
	}
	errs := ValidateSecret(secret(corev1.SecretTypeDockercfg, map[string][]byte{".dockercfg": []byte("{")}, nil))
	if len(errs) == 1 && errs[0].BadValue != "<secret contents redacted>" {
		t.Errorf("got bad value %v, want the contents redacted", errs[0].BadValue)
	}
}

func TestValidateSecretUpdate(t *testing.T) {
	immutable := func(s *corev1.Secret) { s.Immutable = ptr(true) }
	data := func() map[string][]byte { return map[string][]byte{"k": []byte("v")} }
	cases := []struct {
		name     string
		old, new *corev1.Secret
		want     []string
	}{
		{"data change", secret(corev1.SecretTypeOpaque, data(), nil), secret(corev1.SecretTypeOpaque, map[string][]byte{"k": []byte("w")}, nil), nil},
		{"type change", secret(corev1.SecretTypeOpaque, data(), nil), secret("example.com/x", data(), nil), []string{invalid + " type"}},
		{"immutable data change", secret(corev1.SecretTypeOpaque, data(), immutable),
			secret(corev1.SecretTypeOpaque, map[string][]byte{"k": []byte("w")}, immutable), []string{forbidden + " data"}},
		{"immutable unset", secret(corev1.SecretTypeOpaque, data(), immutable), secret(corev1.SecretTypeOpaque, data(), nil),
			[]string{forbidden + " immutable"}},
		{"immutable type change", secret(corev1.SecretTypeOpaque, data(), immutable), secret("example.com/x", data(), immutable),
			[]string{invalid + " type"}},
		{"immutable metadata change", secret(corev1.SecretTypeOpaque, data(), immutable),
			secret(corev1.SecretTypeOpaque, data(), func(s *corev1.Secret) { immutable(s); s.Labels = map[string]string{"a": "b"} }), nil},
		{"new object invalid", secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": nil, "tls.key": nil}, nil),
			secret(corev1.SecretTypeTLS, map[string][]byte{"tls.crt": nil}, nil), []string{required + " data[tls.key]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkErrs(t, ValidateSecretUpdate(tc.new, tc.old), tc.want...)
			checkErrs(t, ValidateSecretUpdateFields(tc.new, tc.old), tc.want...)
		})
	}
}
