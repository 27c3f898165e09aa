// Package bootstrap holds kube-apiserver's mandatory and suggested API
// Priority and Fairness configuration objects: golden data copied value by
// value from upstream
// staging/src/k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go
// (the flowcontrol/v1 shape of v1.29 to v1.37: nominalConcurrencyShares and
// lendablePercent, queueLengthLimit 50, the probes schema; v1.37 dropped the
// workload-leader-election and endpoint-controller schemas), each object
// annotated apf.kubernetes.io/autoupdate-spec=true.
package bootstrap
