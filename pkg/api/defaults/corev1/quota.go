package corev1

import (
	corev1 "k8s.io/api/core/v1"
)

// SetDefaults_LimitRangeItem completes a Container limit: a missing
// default limit is the max, a missing default request is the default
// limit, else the min.
func SetDefaults_LimitRangeItem(obj *corev1.LimitRangeItem) {
	if obj.Type != corev1.LimitTypeContainer {
		return
	}
	if obj.Default == nil {
		obj.Default = make(corev1.ResourceList)
	}
	if obj.DefaultRequest == nil {
		obj.DefaultRequest = make(corev1.ResourceList)
	}
	fill := func(dst, src corev1.ResourceList) {
		for name, q := range src {
			if _, ok := dst[name]; !ok {
				dst[name] = q.DeepCopy()
			}
		}
	}
	fill(obj.Default, obj.Max)
	fill(obj.DefaultRequest, obj.Default)
	fill(obj.DefaultRequest, obj.Min)
}

// SetObjectDefaults_LimitRange defaults each limit of a LimitRange and
// rounds its quantities.
func SetObjectDefaults_LimitRange(in *corev1.LimitRange) {
	for i := range in.Spec.Limits {
		l := &in.Spec.Limits[i]
		SetDefaults_LimitRangeItem(l)
		SetDefaults_ResourceList(&l.Max)
		SetDefaults_ResourceList(&l.Min)
		SetDefaults_ResourceList(&l.Default)
		SetDefaults_ResourceList(&l.DefaultRequest)
		SetDefaults_ResourceList(&l.MaxLimitRequestRatio)
	}
}

// SetObjectDefaults_LimitRangeList defaults each LimitRange of a list.
func SetObjectDefaults_LimitRangeList(in *corev1.LimitRangeList) {
	for i := range in.Items {
		SetObjectDefaults_LimitRange(&in.Items[i])
	}
}

// SetObjectDefaults_ResourceQuota rounds the quantities of a
// ResourceQuota.
func SetObjectDefaults_ResourceQuota(in *corev1.ResourceQuota) {
	SetDefaults_ResourceList(&in.Spec.Hard)
	SetDefaults_ResourceList(&in.Status.Hard)
	SetDefaults_ResourceList(&in.Status.Used)
}

// SetObjectDefaults_ResourceQuotaList defaults each ResourceQuota of a
// list.
func SetObjectDefaults_ResourceQuotaList(in *corev1.ResourceQuotaList) {
	for i := range in.Items {
		SetObjectDefaults_ResourceQuota(&in.Items[i])
	}
}
