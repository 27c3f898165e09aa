// Package podsecurity is the PodSecurity admission plugin: it checks pods,
// and the pod templates of workload resources, against the Pod Security
// Standards levels (privileged, baseline, restricted) that namespace
// labels pod-security.kubernetes.io/{enforce,audit,warn}[-version] select,
// as kube-apiserver v1.37's plugin (k8s.io/pod-security-admission) does.
package podsecurity
