// Package horizontalpodautoscaler is the storage of
// HorizontalPodAutoscalers: one store, holding autoscaling/v2 objects (the
// storage version of kube-apiserver v1.37), served as autoscaling/v2 by
// the store itself and as autoscaling/v1 by [V1REST], which converts every
// object on the way in and out (package
// pkg/api/conversion/autoscaling), with upstream's strategy:
// status through /status only, spec validated as upstream.
//
// No autoscaler controller runs in kapi: autoscalers get no status unless
// a client writes one.
package horizontalpodautoscaler
