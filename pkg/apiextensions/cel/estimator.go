package cel

import "cel.dev/cel-go/common/cost"

// CostEstimator returns the static cost estimator of the Kubernetes
// libraries of EnvOptions, the sizes of the expression's variables coming
// from sizes (nil: unknown). It is for other users of the environment,
// e.g. the DRA device selectors of resource.k8s.io.
func CostEstimator(sizes cost.Estimator) cost.Estimator {
	return &ruleCosts{&libCost{sizes: sizes}}
}
