// Package aggregator is the head of kapi's server chain, as
// kube-aggregator is kube-apiserver's: it serves
// apiregistration.k8s.io/v1 apiservices, keeps one local APIService per
// group-version the chain serves (kube-apiserver's autoregistration),
// proxies every non-local APIService's /apis/<group>/<version> to its
// service (package proxy), and keeps each APIService's Available
// condition (local ones always; remote ones by checking the service, its
// endpoints and the backend's discovery).
//
// Everything runs from post-start hooks named as upstream's:
//
//	start-kube-aggregator-informers                 follows the apiservices store
//	apiservice-registration-controller              proxy routes; closes APIServiceRegistrationControllerInitiated
//	apiservice-status-local-available-controller    local APIServices are Available
//	apiservice-status-remote-available-controller   probes the others
//	kube-apiserver-autoregistration                 local APIServices follow discovery
//
// and the boot-sequence check autoregister-completion is
// [Aggregator.AutoregisterCompletion].
package aggregator
