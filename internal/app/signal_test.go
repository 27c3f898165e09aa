package app_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kapi-dev/kapi/internal/app"
	"github.com/kapi-dev/kapi/pkg/server"
)

// When the test binary runs with KAPI_TEST_RUN_COMMAND set it becomes the
// kapi command (the same code as cmd/kapi), so signal handling is tested in
// a real child process.
func TestMain(m *testing.M) {
	if spec := os.Getenv("KAPI_TEST_ETCD_MEMBER"); spec != "" {
		etcdMemberChild(spec)
		return
	}
	if dir := os.Getenv("KAPI_TEST_DURABILITY_DIR"); dir != "" {
		durabilityChild(dir)
		return
	}
	if args := os.Getenv("KAPI_TEST_RUN_COMMAND"); args != "" {
		cmd := app.NewCommand()
		cmd.SetArgs(strings.Fields(args))
		if err := cmd.Execute(); err != nil {
			fmt.Fprintf(os.Stderr, "Error: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type child struct {
	cmd        *exec.Cmd
	dataDir    string
	exited     chan error
	stderrTail *strings.Builder
}

func startChild(t *testing.T, extra ...string) *child {
	t.Helper()
	return startChildIn(t, t.TempDir(), extra...)
}

// startChildIn starts kapi in a child process on data dir dir (memory
// storage unless extra says otherwise).
func startChildIn(t *testing.T, dir string, extra ...string) *child {
	t.Helper()
	args := append([]string{"--data-dir=" + dir, "--secure-port=0", "--storage-backend=memory"}, extra...)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KAPI_TEST_RUN_COMMAND="+strings.Join(args, " "))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, dataDir: dir, exited: make(chan error, 1), stderrTail: &strings.Builder{}}
	lines := make(chan string, 1000)
	go func() {
		s := bufio.NewScanner(stderr)
		for s.Scan() {
			select {
			case lines <- s.Text():
			default:
			}
		}
		close(lines)
	}()
	go func() {
		for l := range lines {
			c.stderrTail.WriteString(l + "\n")
		}
		c.exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return c
}

// readyClient waits for the admin kubeconfig and a 200 from /readyz.
func (c *child) readyClient(t *testing.T) (*http.Client, string) {
	t.Helper()
	kubeconfig := filepath.Join(c.dataDir, "admin.kubeconfig")
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err == nil {
			client, err := rest.HTTPClientFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Get(cfg.Host + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return client, cfg.Host
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("child never became ready")
	return nil, ""
}

func (c *child) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-c.exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(90 * time.Second):
		t.Fatal("child did not exit")
		return -1
	}
}

func TestFirstSignalTerminatesCleanly(t *testing.T) {
	c := startChild(t)
	c.readyClient(t)
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit code %d after one SIGTERM, want 0\n%s", code, c.stderrTail.String())
	}
	if !strings.Contains(c.stderrTail.String(), "[graceful-termination] apiserver is exiting") {
		t.Fatalf("no clean termination logged:\n%s", c.stderrTail.String())
	}
}

func TestSecondSignalExitsAtOnce(t *testing.T) {
	c := startChild(t, "--shutdown-delay-duration=1m")
	client, host := c.readyClient(t)
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// Wait until shutdown started (readyz red), then signal again.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get(host + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 500 && strings.Contains(string(body), "[-]shutdown failed") {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("readyz never turned red after the first signal")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != 1 {
		t.Fatalf("exit code %d after a second signal, want 1", code)
	}
}

func TestSignalHandlerTwicePanics(t *testing.T) {
	if os.Getenv("KAPI_TEST_SIGNAL_TWICE") == "1" {
		server.SetupSignalHandler()
		server.SetupSignalHandler()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSignalHandlerTwicePanics$")
	cmd.Env = append(os.Environ(), "KAPI_TEST_SIGNAL_TWICE=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "panic: close of closed channel") {
		t.Fatalf("second SetupSignalHandler must panic; got err=%v\n%s", err, out)
	}
}
