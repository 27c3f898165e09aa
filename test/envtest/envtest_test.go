package envtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// buildKapi builds the kapi binary into a temporary directory (once per
// test binary run) and returns its path.
var buildKapi = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kapi-envtest-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kapi")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/kapi-dev/kapi/cmd/kapi").CombinedOutput()
	if err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build kapi: " + e.err.Error() + "\n" + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if bin, err := buildKapi(); err == nil {
		_ = os.RemoveAll(filepath.Dir(bin))
	}
	os.Exit(code)
}

// kapiAssets builds kapi and makes a KUBEBUILDER_ASSETS directory of it
// with `kapi install-envtest-assets`.
func kapiAssets(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build kapi with")
	}
	bin, err := buildKapi()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "assets")
	out, err := exec.Command(bin, "install-envtest-assets", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("kapi install-envtest-assets: %v\n%s", err, out)
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		target, err := os.Readlink(filepath.Join(dir, name))
		if err != nil || target != bin {
			t.Fatalf("%s links to %q (%v), want %s", name, target, err, bin)
		}
	}
	return dir
}

// processLog collects a control-plane process's output, shown if the test
// fails.
type processLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *processLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *processLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// controller-runtime's own envtest.Environment, unchanged, with
// KUBEBUILDER_ASSETS pointing at kapi: it starts kapi as etcd and as
// kube-apiserver with its usual flags, installs the CRDs, authenticates
// with its own client CA, and the reconciler runs against it.
func TestReconcilerWithEnvtestAndKapiAssets(t *testing.T) {
	assets := kapiAssets(t)
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	apiLog, etcdLog := &processLog{}, &processLog{}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{"testdata/crds"},
		ErrorIfCRDPathMissing: true,
	}
	env.ControlPlane.GetAPIServer().Out, env.ControlPlane.GetAPIServer().Err = apiLog, apiLog
	env.ControlPlane.Etcd = &envtest.Etcd{Out: etcdLog, Err: etcdLog}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest Start: %v\nkube-apiserver:\n%s\netcd:\n%s", err, apiLog, etcdLog)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("envtest Stop: %v", err)
		}
	})
	defer func() {
		if t.Failed() {
			t.Logf("kube-apiserver (kapi) output:\n%s", apiLog)
		}
	}()
	// envtest passes --allow-privileged=true (apiserver.go defaultArgs),
	// which kapi accepts, logs and does not apply.
	if !strings.Contains(apiLog.String(), `msg="kube-apiserver flag accepted but not applied by kapi" flag=--allow-privileged value=true`) {
		t.Errorf("kapi's log does not say --allow-privileged was accepted and not applied")
	}
	// envtest's admin is its own client-certificate user, signed by the
	// CA envtest passes as --client-ca-file (controller-runtime v0.25.2,
	// pkg/envtest/server.go: User{Name: "admin", Groups: system:masters}).
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if u := review.Status.UserInfo; u.Username != "admin" || !slices.Contains(u.Groups, "system:masters") {
		t.Errorf("envtest's client authenticates as %q in %v, want admin in system:masters", u.Username, u.Groups)
	}
	// envtest's AddUser: a certificate of envtest's CA, for any user.
	user, err := env.ControlPlane.AddUser(envtest.User{Name: "bob", Groups: []string{"devs"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bobCfg := user.Config()
	review, err = kubernetes.NewForConfigOrDie(bobCfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if review.Status.UserInfo.Username != "bob" {
		t.Errorf("AddUser's client authenticates as %q, want bob", review.Status.UserInfo.Username)
	}
	runReconcilerScenario(t, cfg)
}
