package cel

import (
	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/cost"
)

// CostEstimator returns the static cost estimator of the Kubernetes
// libraries of EnvOptions, the sizes of the expression's variables coming
// from sizes (nil: unknown). It is for other users of the environment,
// e.g. the DRA device selectors of resource.k8s.io.
func CostEstimator(sizes cost.Estimator) cost.Estimator {
	return &ruleCosts{&libCost{sizes: sizes}}
}

// CostTracking are the run-time cost options of programs of EnvOptions'
// environment, as upstream's base environment has them for every user
// (CRD rules, admission policies, match conditions): the libraries'
// calls charged as upstream's tracker charges them, has() free.
func CostTracking() []cel.ProgramOption {
	return []cel.ProgramOption{
		cel.CostTracking(&libCost{}),
		cel.CostTrackerOptions(cost.TrackerPresenceTestHasCost(false)),
	}
}
