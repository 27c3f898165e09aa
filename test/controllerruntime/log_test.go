package controllerruntime

import (
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// logrDiscard silences controller-runtime's own logging (it complains
// when no logger is set) and klog, through which client-go's event
// broadcaster reports events it could not write after a server stopped.
func logrDiscard() logr.Logger {
	klog.SetLogger(logr.Discard())
	return logr.Discard()
}
