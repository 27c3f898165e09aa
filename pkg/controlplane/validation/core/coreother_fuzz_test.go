package core

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
)

// FuzzValidateCoreOther decodes arbitrary JSON as each kind validated here,
// defaults it as the API server does, and validates it as new, as an
// update of itself and of a valid object, and as a status update: no
// input may panic.
func FuzzValidateCoreOther(f *testing.F) {
	for _, obj := range []any{validNode(), validPV(), validPVC(), validRC(), validLimitRange(), validQuota()} {
		b, err := json.Marshal(obj)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"spec":{"limits":[{"type":"Container","max":{"cpu":"0"},"min":{"cpu":"0"},"maxLimitRequestRatio":{"cpu":"2"}}]}}`))
	f.Add([]byte(`{"spec":{"podCIDRs":["::/0","0.0.0.0/0","x"],"taints":[{"key":""}]},"metadata":{"annotations":{"scheduler.alpha.kubernetes.io/preferAvoidPods":"{\"preferAvoidPods\":[{\"podSignature\":{\"podController\":{}}}]}"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		node := &corev1.Node{}
		if json.Unmarshal(data, node) == nil {
			scheme.Scheme.Default(node)
			_ = ValidateNode(node)
			_ = ValidateNodeSpecUpdateFields(node, validNode())
			_ = ValidateNodeUpdateFields(node, node.DeepCopy())
		}
		pv := &corev1.PersistentVolume{}
		if json.Unmarshal(data, pv) == nil {
			scheme.Scheme.Default(pv)
			_ = ValidatePersistentVolume(pv)
			_ = ValidatePersistentVolumeUpdateFields(pv, validPV())
			_ = ValidatePersistentVolumeUpdateFields(pv, pv.DeepCopy())
			_ = ValidatePersistentVolumeStatusUpdateFields(pv, pv)
			_ = PersistentVolumeWarnings(pv)
		}
		pvc := &corev1.PersistentVolumeClaim{}
		if json.Unmarshal(data, pvc) == nil {
			scheme.Scheme.Default(pvc)
			_ = ValidatePersistentVolumeClaim(pvc)
			_ = ValidatePersistentVolumeClaimUpdateFields(pvc, validPVC())
			_ = ValidatePersistentVolumeClaimUpdateFields(pvc, pvc.DeepCopy())
			_ = ValidatePersistentVolumeClaimStatusUpdateFields(pvc, pvc)
			_ = PersistentVolumeClaimWarnings(pvc)
		}
		rc := &corev1.ReplicationController{}
		if json.Unmarshal(data, rc) == nil {
			scheme.Scheme.Default(rc)
			_ = ValidateReplicationController(rc)
			_ = ValidateReplicationControllerUpdateFields(rc, validRC())
			_ = ValidateReplicationControllerStatusUpdateFields(rc, rc)
		}
		lr := &corev1.LimitRange{}
		if json.Unmarshal(data, lr) == nil {
			scheme.Scheme.Default(lr)
			_ = ValidateLimitRange(lr)
		}
		q := &corev1.ResourceQuota{}
		if json.Unmarshal(data, q) == nil {
			scheme.Scheme.Default(q)
			_ = ValidateResourceQuota(q)
			_ = ValidateResourceQuotaUpdateFields(q, validQuota())
			_ = ValidateResourceQuotaStatusUpdateFields(q, q)
		}
	})
}
