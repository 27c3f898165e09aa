package validation

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzValidateSecret checks secrets built from arbitrary user input: a
// key is rejected exactly when it is not a configmap key, and a
// dockerconfigjson secret exactly when its content is not a JSON object.
func FuzzValidateSecret(f *testing.F) {
	f.Add("key", []byte(`{"auths":{}}`))
	f.Add("a/b", []byte(`[]`))
	f.Add("..", []byte(`{`))
	f.Add("", []byte(`null`))
	f.Fuzz(func(t *testing.T, key string, content []byte) {
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: content, key: nil},
		}
		if key == corev1.DockerConfigJsonKey {
			s.Data[key] = content
		}
		errs := ValidateSecretFields(s)
		keyBad := key != corev1.DockerConfigJsonKey && len(validation.IsConfigMapKey(key)) > 0
		jsonBad := json.Unmarshal(content, &map[string]any{}) != nil
		var gotKeyErr, gotJSONErr bool
		for _, e := range errs {
			switch e.Field {
			case "data[" + corev1.DockerConfigJsonKey + "]":
				gotJSONErr = true
			default:
				gotKeyErr = true
			}
		}
		if gotKeyErr != keyBad || gotJSONErr != jsonBad {
			t.Errorf("key %q content %q: got errors %v, want key error %v, JSON error %v", key, content, errs, keyBad, jsonBad)
		}
	})
}
