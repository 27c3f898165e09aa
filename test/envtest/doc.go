// Package envtest proves issue 17's two ways of testing a controller
// against kapi: in-process with kapitest, and with controller-runtime's
// own envtest.Environment running kapi (linked as kube-apiserver and etcd
// by `kapi install-envtest-assets`) from KUBEBUILDER_ASSETS, with no
// download. It lives in its own package so that only these tests pull
// controller-runtime's envtest into the build.
package envtest
