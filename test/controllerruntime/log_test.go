package controllerruntime

import (
	"os"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// TestMain silences controller-runtime's logging (it complains when no
// logger is set) and klog, through which client-go's event broadcaster
// reports events it could not write after a server stopped. Both are
// process-wide, so they are set once, before any test starts goroutines
// that read them.
func TestMain(m *testing.M) {
	klog.SetLogger(logr.Discard())
	log.SetLogger(logr.Discard())
	os.Exit(m.Run())
}
