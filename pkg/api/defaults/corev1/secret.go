package corev1

import (
	corev1 "k8s.io/api/core/v1"
)

// SetObjectDefaults_Secret is what decoding a core/v1 Secret does in
// kube-apiserver v1.37: its conversion to the internal version
// (Convert_v1_Secret_To_core_Secret) writes stringData's values over
// data's under the same keys and drops stringData (it is write-only), and
// SetDefaults_Secret makes an empty type Opaque. Doing it when the object
// is decoded, as upstream, means the field manager sees data and type, not
// stringData: a create with stringData records f:data and f:type.
func SetObjectDefaults_Secret(s *corev1.Secret) {
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = make(map[string][]byte, len(s.StringData))
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
}

// SetObjectDefaults_SecretList defaults each item as SetObjectDefaults_Secret.
func SetObjectDefaults_SecretList(l *corev1.SecretList) {
	for i := range l.Items {
		SetObjectDefaults_Secret(&l.Items[i])
	}
}
