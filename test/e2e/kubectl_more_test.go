package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// TestKubectlMore drives the kubectl commands TestKubectlEveryday leaves
// out with the real kubectl 1.27 and 1.33: -o json and -o wide, get -w,
// diff, edit, annotate, api-versions, delete by selector and server-side
// apply with conflicts. 1.33 runs on both backends, 1.27 on memory only.
func TestKubectlMore(t *testing.T) {
	binaries := kubectlPair(t)
	cases := []struct {
		name string
		fn   func(t *testing.T, e *env, k *kc)
	}{
		{"tables", testKubectlTables},
		{"json", testKubectlJSON},
		{"watch", testKubectlGetWatch},
		{"diff", testKubectlDiff},
		{"edit", testKubectlEdit},
		{"annotate", testKubectlAnnotate},
		{"api-versions", testKubectlAPIVersions},
		{"delete-selector", testKubectlDeleteSelector},
		{"server-side-apply", testKubectlServerSideApply},
	}
	forEachBackend(t, func(t *testing.T, e *env) {
		for _, bin := range binaries {
			if e.backend != "memory" && filepath.Base(bin) == "kubectl.1.27" {
				continue
			}
			t.Run(filepath.Base(bin), func(t *testing.T) {
				for _, c := range cases {
					t.Run(c.name, func(t *testing.T) {
						t.Parallel()
						c.fn(t, e, newKC(t, e, bin))
					})
				}
			})
		}
	})
}

// kc runs one kubectl binary against one server, with a HOME (a discovery
// cache) and a TMPDIR (diff's and edit's files) of its own. Tests check
// the outcome with client-go (cs): cheaper than more kubectl processes.
type kc struct {
	bin, kubeconfig, dir string
	env                  []string
	cs                   kubernetes.Interface
}

func newKC(t *testing.T, e *env, bin string) *kc {
	dir := t.TempDir()
	return &kc{bin: bin, kubeconfig: e.srv.Kubeconfig, dir: dir, env: append(os.Environ(), "HOME="+dir, "TMPDIR="+dir), cs: e.cs}
}

type kcResult struct {
	stdout, stderr string
	code           int
}

func (r kcResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// run runs kubectl with stdin and the extra environment variables env
// ("NAME=value"); it fails the test only when kubectl cannot run at all.
func (k *kc) run(t *testing.T, stdin string, env []string, args ...string) kcResult {
	t.Helper()
	r, err := k.exec(stdin, env, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// exec is run without a *testing.T, for any goroutine: it returns an
// error when kubectl cannot run or is killed, not when it exits with a
// code.
func (k *kc) exec(stdin string, env []string, args ...string) (kcResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(append([]string{}, k.env...), env...)
	err := cmd.Run()
	r := kcResult{stdout: stdout.String(), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && exitErr.ExitCode() > 0:
		r.code = exitErr.ExitCode()
	default:
		return r, fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, r)
	}
	return r, nil
}

// ok runs kubectl, wants exit 0 and returns stdout.
func (k *kc) ok(t *testing.T, args ...string) string {
	t.Helper()
	r := k.run(t, "", nil, args...)
	if r.code != 0 {
		t.Fatalf("kubectl %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// apply applies a manifest with `kubectl apply -f -`.
func (k *kc) apply(t *testing.T, ns, manifest string, flags ...string) string {
	t.Helper()
	args := append([]string{"-n", ns, "apply", "-f", "-"}, flags...)
	r := k.run(t, manifest, nil, args...)
	if r.code != 0 {
		t.Fatalf("kubectl %s:\n%s\n%s", strings.Join(args, " "), manifest, r)
	}
	return r.stdout
}

func (k *kc) configMap(t *testing.T, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := k.cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get configmap %s/%s: %v", ns, name, err)
	}
	return cm
}

// configMapNames are the names of the configmaps matching selector, as
// `kubectl get -o name` prints them.
func (k *kc) configMapNames(t *testing.T, ns, selector string) string {
	t.Helper()
	list, err := k.cs.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		t.Fatalf("list configmaps in %s: %v", ns, err)
	}
	var b strings.Builder
	for _, cm := range list.Items {
		fmt.Fprintf(&b, "configmap/%s\n", cm.Name)
	}
	return b.String()
}

// kcConfigMap is the manifest of a configmap with string data and labels,
// both as "k=v" pairs.
func kcConfigMap(name string, labels, data []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name)
	if len(labels) > 0 {
		b.WriteString("  labels:\n")
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			fmt.Fprintf(&b, "    %s: %q\n", k, v)
		}
	}
	if len(data) > 0 {
		b.WriteString("data:\n")
		for _, d := range data {
			k, v, _ := strings.Cut(d, "=")
			fmt.Fprintf(&b, "  %s: %q\n", k, v)
		}
	}
	return b.String()
}

// kubectlTable renders rows the way kubectl prints a table: through a
// text/tabwriter with minwidth 6, tabwidth 4, padding 3 and spaces
// (k8s.io/cli-runtime's printers.GetNewTabWriter).
func kubectlTable(rows ...[]string) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 6, 4, 3, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	_ = w.Flush()
	return b.String()
}

var kcAge = regexp.MustCompile(`(?m)\b(\d+m)?\d+s$`)

// withAge replaces the ages of seconds ending the lines of a table (the
// AGE column) with <age>.
func withAge(out string) string { return kcAge.ReplaceAllString(out, "<age>") }

// testKubectlTables compares `kubectl get` tables, plain, -o wide and -A,
// with what kubectl prints against kube-apiserver for the same objects.
func testKubectlTables(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	now := time.Now().UTC()
	// Ages the server renders in minutes: stable for 50 s.
	ago := func(m time.Duration) time.Time { return now.Add(-m*time.Minute - 10*time.Second) }
	k.apply(t, ns, fmt.Sprintf(`apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c1, labels: {tbl: %[1]q}}
  data: {a: "1", b: "2"}
- apiVersion: v1
  kind: Secret
  metadata: {name: s1, labels: {tbl: %[1]q}}
  stringData: {p: secret}
- apiVersion: v1
  kind: ServiceAccount
  metadata: {name: sa1, labels: {tbl: %[1]q}}
- apiVersion: coordination.k8s.io/v1
  kind: Lease
  metadata: {name: l1}
  spec: {holderIdentity: me}
- apiVersion: v1
  kind: Event
  metadata: {name: ev1}
  involvedObject: {kind: ConfigMap, name: c1, namespace: %[1]s, fieldPath: data}
  reason: Tested
  message: "hello there "
  type: Normal
  source: {component: e2e, host: h1}
  count: 3
  firstTimestamp: %[2]q
  lastTimestamp: %[3]q
- apiVersion: events.k8s.io/v1
  kind: Event
  metadata: {name: ev2}
  eventTime: %[4]q
  reportingController: e2e.kapi.dev/ctrl
  reportingInstance: inst
  action: Testing
  reason: Second
  type: Warning
  regarding: {kind: ConfigMap, name: c1, namespace: %[1]s}
  note: second one
`, ns, ago(90).Format(time.RFC3339), ago(30).Format(time.RFC3339), ago(20).Format("2006-01-02T15:04:05.000000Z07:00")))

	events := [][]string{
		{"LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"},
		{"30m", "Normal", "Tested", "configmap/c1", "hello there"},
		// events.k8s.io: no lastTimestamp, count or source; eventTime and
		// the reporting controller stand in.
		{"20m", "Warning", "Second", "configmap/c1", "second one"},
	}
	eventsWide := [][]string{
		{"LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"},
		{"30m", "Normal", "Tested", "configmap/c1", "data", "e2e, h1", "hello there", "90m", "3", "ev1"},
		{"20m", "Warning", "Second", "configmap/c1", "", "e2e.kapi.dev/ctrl, inst", "second one", "20m", "1", "ev2"},
	}
	sel := "tbl=" + ns
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"get", "cm", "-l", sel}, "NAME   DATA   AGE\nc1     2      <age>\n"},
		{[]string{"get", "cm", "-l", sel, "-o", "wide"}, "NAME   DATA   AGE\nc1     2      <age>\n"},
		{[]string{"get", "cm", "-l", sel, "-A"}, kubectlTable([]string{"NAMESPACE", "NAME", "DATA", "AGE"}, []string{ns, "c1", "2", "<age>"})},
		{[]string{"get", "secrets", "-l", sel, "-o", "wide"}, "NAME   TYPE     DATA   AGE\ns1     Opaque   1      <age>\n"},
		{[]string{"get", "sa", "-l", sel, "-o", "wide"}, "NAME   AGE\nsa1    <age>\n"},
		{[]string{"get", "leases", "-o", "wide"}, "NAME   HOLDER   AGE\nl1     me       <age>\n"},
		{[]string{"get", "events"}, kubectlTable(events...)},
		{[]string{"get", "events", "-o", "wide"}, kubectlTable(eventsWide...)},
		{[]string{"get", "events.events.k8s.io", "-o", "wide"}, kubectlTable(eventsWide...)},
		{[]string{"get", "cm", "c1", "--no-headers"}, kubectlTable([]string{"c1", "2", "<age>"})},
	}
	for _, tc := range tests {
		out := k.ok(t, append([]string{"-n", ns}, tc.args...)...)
		if got := withAge(out); got != tc.want {
			t.Errorf("kubectl %s: got\n%s\nwant\n%s", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// testKubectlJSON decodes `kubectl get -o json` of one object and of a
// list read in chunks of one.
func testKubectlJSON(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	for _, name := range []string{"j1", "j2", "j3"} {
		k.apply(t, ns, kcConfigMap(name, []string{"set=j"}, []string{"k=" + name}))
	}

	out := k.ok(t, "-n", ns, "get", "cm", "j1", "-o", "json")
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var cm corev1.ConfigMap
	if err := dec.Decode(&cm); err != nil {
		t.Fatalf("decode get -o json: %v\n%s", err, out)
	}
	if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Name != "j1" || cm.Namespace != ns ||
		cm.UID == "" || cm.ResourceVersion == "" || cm.CreationTimestamp.IsZero() ||
		fmt.Sprint(cm.Data) != "map[k:j1]" || cm.Labels["set"] != "j" || len(cm.ManagedFields) != 0 {
		t.Errorf("get -o json: got %+v", cm)
	}
	if !strings.HasPrefix(out, "{\n    \"apiVersion\": \"v1\",\n") {
		t.Errorf("get -o json is not indented by four spaces:\n%s", out)
	}

	// --chunk-size=1 reads the list with limit=1 and three continue tokens.
	out = k.ok(t, "-n", ns, "get", "cm", "-l", "set=j", "-o", "json", "--chunk-size=1")
	var list struct {
		APIVersion string             `json:"apiVersion"`
		Kind       string             `json:"kind"`
		Items      []corev1.ConfigMap `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("decode get -o json of a list: %v\n%s", err, out)
	}
	var got []string
	for _, it := range list.Items {
		if it.APIVersion != "v1" || it.Kind != "ConfigMap" || it.Data["k"] != it.Name {
			t.Errorf("list item: got %+v", it)
		}
		got = append(got, it.Name)
	}
	if list.APIVersion != "v1" || list.Kind != "List" || strings.Join(got, ",") != "j1,j2,j3" {
		t.Errorf("get -o json --chunk-size=1: got %s %s items %v, want v1 List items j1,j2,j3", list.APIVersion, list.Kind, got)
	}
}

// testKubectlGetWatch streams `kubectl get cm -w`: the table of what is,
// then a row per change.
func testKubectlGetWatch(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	k.ok(t, "-n", ns, "create", "cm", "w0", "--from-literal=k=v")

	// Watching w0, which does not change, ends at --request-timeout,
	// cleanly; it runs while the other watch below sees w1 change.
	type result struct {
		r   kcResult
		err error
	}
	quiet := make(chan result, 1)
	go func() {
		r, err := k.exec("", nil, "-n", ns, "get", "cm", "w0", "-w", "--request-timeout=2s")
		quiet <- result{r, err}
	}()
	defer func() {
		q := <-quiet
		if want := "NAME   DATA   AGE\nw0     1      <age>\n"; q.err != nil || q.r.code != 0 || withAge(q.r.stdout) != want {
			t.Errorf("get cm w0 -w --request-timeout=2s: got %v %s\nwant exit 0 and\n%s", q.err, q.r, want)
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, "--kubeconfig", k.kubeconfig, "-n", ns, "get", "cm", "-w", "--request-timeout=30s")
	cmd.Env = k.env
	cmd.Stderr = io.Discard
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() {
		cancel() // kills kubectl: the reader sees EOF
		<-readerDone
		_ = cmd.Wait()
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("kubectl get -w ended before printing %s", what)
			}
			return l
		case <-ctx.Done():
			t.Fatalf("kubectl get -w did not print %s within 30s", what)
		}
		return ""
	}
	if got := next("the header"); got != "NAME   DATA   AGE" {
		t.Fatalf("get -w header: got %q, want %q", got, "NAME   DATA   AGE")
	}
	if got := withAge(next("w0")); got != "w0     1      <age>" {
		t.Fatalf("get -w first row: got %q, want w0 1", got)
	}
	// kubectl watches from the list's resourceVersion: nothing is missed.
	k.ok(t, "-n", ns, "create", "cm", "w1", "--from-literal=k=v")
	if got := strings.Fields(withAge(next("the creation"))); strings.Join(got, " ") != "w1 1 <age>" {
		t.Fatalf("get -w after a create: got %q, want w1 1 <age>", got)
	}
	k.ok(t, "-n", ns, "patch", "cm", "w1", "--type=merge", "-p", `{"data":{"k2":"v"}}`)
	if got := strings.Fields(withAge(next("the update"))); strings.Join(got, " ") != "w1 2 <age>" {
		t.Fatalf("get -w after an update: got %q, want w1 2 <age>", got)
	}
}

// kcDiffHunks counts the hunks of a unified diff and returns its removed
// and added lines, in order.
func kcDiffHunks(out string) (hunks int, changed []string) {
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "@@ "):
			hunks++
		case strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ "):
		case strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+"):
			changed = append(changed, l)
		}
	}
	return hunks, changed
}

// testKubectlDiff runs `kubectl diff`: exit 0 and no output when the live
// object equals the merged one, exit 1 and a unified diff otherwise; the
// dry runs change nothing.
func testKubectlDiff(t *testing.T, e *env, k *kc) {
	if _, err := exec.LookPath("diff"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("kubectl diff needs diff(1) on PATH under CI=true")
		}
		t.Skip("kubectl diff needs diff(1) on PATH")
	}
	ns := e.newNamespace(t)
	write := func(name, manifest string) string {
		p := filepath.Join(k.dir, name)
		if err := os.WriteFile(p, []byte(manifest), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	v1 := write("v1.yaml", kcConfigMap("d1", []string{"app=x"}, []string{"a=1", "b=keep"}))
	v2 := write("v2.yaml", kcConfigMap("d1", []string{"app=x"}, []string{"a=2", "b=keep"}))
	fresh := write("new.yaml", kcConfigMap("dnew", nil, []string{"a=1"}))
	k.ok(t, "-n", ns, "apply", "-f", v1)

	tests := []struct {
		name  string
		args  []string
		code  int
		hunks int
		// changed are the lines of the diff starting with - or +, in order.
		changed []string
	}{
		{"client-side, equal", []string{"diff", "-f", v1}, 0, 0, nil},
		// Client-side diff merges without the last-applied annotation:
		// only data.a changes, and the dry run keeps resourceVersion.
		{"client-side, changed", []string{"diff", "-f", v2}, 1, 1, []string{`-  a: "1"`, `+  a: "2"`}},
		{"server-side, changed", []string{"diff", "--server-side", "-f", v2}, 1, 1, []string{
			`-  a: "1"`, `+  a: "2"`,
			`-      {"apiVersion":"v1","data":{"a":"1","b":"keep"},"kind":"ConfigMap","metadata":{"annotations":{},"labels":{"app":"x"},"name":"d1","namespace":"` + ns + `"}}`,
			`+      {"apiVersion":"v1","data":{"a":"2","b":"keep"},"kind":"ConfigMap","metadata":{"labels":{"app":"x"},"name":"d1","namespace":"` + ns + `"}}`,
		}},
	}
	for _, tc := range tests {
		r := k.run(t, "", nil, append([]string{"-n", ns}, tc.args...)...)
		if r.code != tc.code {
			t.Errorf("%s: kubectl %s: got %s\nwant exit %d", tc.name, strings.Join(tc.args, " "), r, tc.code)
			continue
		}
		if tc.code == 0 {
			if r.stdout != "" {
				t.Errorf("%s: got a diff for equal objects:\n%s", tc.name, r.stdout)
			}
			continue
		}
		if !strings.HasPrefix(r.stdout, "diff -u -N ") || !strings.Contains(r.stdout, "/LIVE-") || !strings.Contains(r.stdout, "/MERGED-") {
			t.Errorf("%s: not a unified diff of LIVE and MERGED:\n%s", tc.name, r.stdout)
		}
		hunks, changed := kcDiffHunks(r.stdout)
		if hunks != tc.hunks || strings.Join(changed, "\n") != strings.Join(tc.changed, "\n") {
			t.Errorf("%s: got %d hunks changing\n%s\nwant %d hunks changing\n%s\nfull diff:\n%s", tc.name, hunks, strings.Join(changed, "\n"), tc.hunks, strings.Join(tc.changed, "\n"), r.stdout)
		}
	}
	if cm := k.configMap(t, ns, "d1"); cm.Data["a"] != "1" {
		t.Errorf("kubectl diff changed the live object: data %v", cm.Data)
	}

	// A new object: a dry-run create, every line added.
	r := k.run(t, "", nil, "-n", ns, "diff", "-f", fresh)
	hunks, changed := kcDiffHunks(r.stdout)
	if r.code != 1 || hunks != 1 || !strings.Contains(r.stdout, "@@ -0,0 +1,") ||
		!strings.Contains(r.stdout, "\n+  name: dnew\n") || !strings.Contains(r.stdout, "\n+  uid: ") {
		t.Errorf("diff of a new object: got %s\nwant exit 1 and one hunk adding it with a uid", r)
	}
	for _, l := range changed {
		if !strings.HasPrefix(l, "+") || strings.HasPrefix(l, "+  resourceVersion:") {
			t.Errorf("diff of a new object: line %q, want only added lines and no resourceVersion (dry run)", l)
		}
	}
	r = k.run(t, "", nil, "-n", ns, "get", "cm", "dnew")
	if want := `Error from server (NotFound): configmaps "dnew" not found`; r.code != 1 || strings.TrimSpace(r.stderr) != want {
		t.Errorf("get after diff of a new object: got %s\nwant %s", r, want)
	}
}

// testKubectlEdit runs `kubectl edit` with KUBE_EDITOR set to a script
// that edits the file with sed.
func testKubectlEdit(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	k.apply(t, ns, kcConfigMap("e1", nil, []string{"a=1", "b=keep"}))
	log := filepath.Join(k.dir, "editor.log")
	editor := func(name, sedExpr string) string {
		p := filepath.Join(k.dir, name)
		script := fmt.Sprintf("#!/bin/sh\ncat \"$1\" >> '%s'\nsed -i '%s' \"$1\"\n", log, sedExpr)
		if err := os.WriteFile(p, []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
		return p
	}
	readLog := func() string {
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(log)
		return string(b)
	}

	r := k.run(t, "", []string{"KUBE_EDITOR=" + editor("set.sh", `s/^  a: "1"$/  a: edited/`)}, "-n", ns, "edit", "cm", "e1")
	if r.code != 0 || r.stdout != "configmap/e1 edited\n" {
		t.Fatalf("edit: got %s\nwant configmap/e1 edited", r)
	}
	if seen := readLog(); !strings.HasPrefix(seen, "# Please edit the object below.") || !strings.Contains(seen, "\ndata:\n  a: \"1\"\n  b: keep\nkind: ConfigMap\n") {
		t.Errorf("the editor got\n%s\nwant the configmap as YAML under kubectl's header", seen)
	}
	if cm := k.configMap(t, ns, "e1"); fmt.Sprint(cm.Data) != "map[a:edited b:keep]" {
		t.Errorf("after edit: got data %v, want a=edited b=keep", cm.Data)
	}

	// An invalid edit: kubectl reopens the file with the server's causes;
	// the editor changes nothing more, so kubectl gives up.
	r = k.run(t, "", []string{"KUBE_EDITOR=" + editor("bad.sh", `s/^data:$/data:\n  bad key: x/`)}, "-n", ns, "edit", "cm", "e1")
	if r.code != 1 || !strings.Contains(r.stderr, `error: configmaps "e1" is invalid`) ||
		!strings.Contains(r.stderr, "error: Edit cancelled, no valid changes were saved.") {
		t.Errorf("invalid edit: got %s\nwant exit 1, configmaps \"e1\" is invalid, edit cancelled", r)
	}
	cause := `# configmaps "e1" was not valid:
# * data[bad key]: Invalid value: "bad key": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')
`
	if seen := readLog(); !strings.Contains(seen, cause) {
		t.Errorf("the reopened file lacks the server's cause\n%s\ngot\n%s", cause, seen)
	}
	if cm := k.configMap(t, ns, "e1"); fmt.Sprint(cm.Data) != "map[a:edited b:keep]" {
		t.Errorf("after an invalid edit: got data %v, want it unchanged", cm.Data)
	}
}

// testKubectlAnnotate adds, overwrites and removes annotations.
func testKubectlAnnotate(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	k.ok(t, "-n", ns, "create", "cm", "a1")
	k.ok(t, "-n", ns, "create", "cm", "a2")
	k.ok(t, "-n", ns, "label", "cm", "a1", "a2", "app=x")
	annotations := func(name string) string {
		t.Helper()
		a := k.configMap(t, ns, name).Annotations
		if len(a) == 0 {
			return ""
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	// kubectl 1.27 prints "annotate" where 1.33 prints "annotated": the
	// verb is kubectl's own.
	annotated := regexp.MustCompile(`^configmap/a1 annotated?\n$`)
	steps := []struct {
		args   []string
		code   int
		stdout *regexp.Regexp
		stderr string
		// want are the annotations of a1 after the step.
		want string
	}{
		{args: []string{"a1", "note=one"}, stdout: annotated, want: `{"note":"one"}`},
		{args: []string{"a1", "note=two"}, code: 1, stderr: "error: --overwrite is false but found the following declared annotation(s): 'note' already has a value (one)\n", want: `{"note":"one"}`},
		{args: []string{"a1", "note=two", "--overwrite"}, stdout: annotated, want: `{"note":"two"}`},
		{args: []string{"a1", "bad key=1"}, code: 1, stderr: `The ConfigMap "a1" is invalid: metadata.annotations: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')` + "\n", want: `{"note":"two"}`},
		{args: []string{"a1", "note-"}, stdout: annotated, want: ``},
	}
	for _, s := range steps {
		args := append([]string{"-n", ns, "annotate", "cm"}, s.args...)
		r := k.run(t, "", nil, args...)
		if r.code != s.code || (s.stdout != nil && !s.stdout.MatchString(r.stdout)) || (s.stderr != "" && r.stderr != s.stderr) {
			t.Fatalf("kubectl %s: got %s\nwant exit %d, stdout %v, stderr %q", strings.Join(args, " "), r, s.code, s.stdout, s.stderr)
		}
		if got := annotations("a1"); got != s.want {
			t.Fatalf("after kubectl %s: got annotations %q, want %q", strings.Join(args, " "), got, s.want)
		}
	}

	// A stale --resource-version is a precondition the server rejects.
	rv := k.configMap(t, ns, "a1").ResourceVersion
	k.ok(t, "-n", ns, "annotate", "cm", "a1", "first=1", "--resource-version="+rv)
	r := k.run(t, "", nil, "-n", ns, "annotate", "cm", "a1", "second=1", "--resource-version="+rv)
	if want := `Error from server (Conflict): Operation cannot be fulfilled on configmaps "a1": the object has been modified; please apply your changes to the latest version and try again` + "\n"; r.code != 1 || r.stderr != want {
		t.Errorf("annotate with a stale resourceVersion: got %s\nwant exit 1 and %s", r, want)
	}

	// By selector.
	out := k.ok(t, "-n", ns, "annotate", "cm", "-l", "app=x", "team=blue")
	if !regexp.MustCompile(`^configmap/a1 annotated?\nconfigmap/a2 annotated?\n$`).MatchString(out) {
		t.Errorf("annotate -l app=x: got %q, want a1 and a2 annotated", out)
	}
	for _, name := range []string{"a1", "a2"} {
		if got := k.configMap(t, ns, name).Annotations["team"]; got != "blue" {
			t.Errorf("after annotate -l: %s has team=%q, want blue", name, got)
		}
	}
}

// testKubectlAPIVersions lists the group versions the chain serves.
func testKubectlAPIVersions(t *testing.T, e *env, k *kc) {
	out := k.ok(t, "api-versions")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if !sort.StringsAreSorted(lines) {
		t.Errorf("api-versions is not sorted:\n%s", out)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Errorf("api-versions lists %s twice", l)
		}
		seen[l] = true
	}
	for _, want := range []string{"apiextensions.k8s.io/v1", "coordination.k8s.io/v1", "events.k8s.io/v1", "v1"} {
		if !seen[want] {
			t.Errorf("api-versions lacks %s:\n%s", want, out)
		}
	}
}

// testKubectlDeleteSelector deletes by label selector, for real and as a
// server dry run.
func testKubectlDeleteSelector(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	for _, cm := range []struct{ name, app string }{{"x1", "x"}, {"x2", "x"}, {"y1", "y"}} {
		k.apply(t, ns, kcConfigMap(cm.name, []string{"app=" + cm.app}, nil))
	}
	tests := []struct {
		args      []string
		stdout    string
		stderr    string
		remaining string
	}{
		{[]string{"-l", "app=x", "--dry-run=server"}, "configmap \"x1\" deleted (server dry run)\nconfigmap \"x2\" deleted (server dry run)\n", "", "configmap/x1\nconfigmap/x2\nconfigmap/y1\n"},
		{[]string{"-l", "app=x"}, "configmap \"x1\" deleted\nconfigmap \"x2\" deleted\n", "", "configmap/y1\n"},
		{[]string{"-l", "app=x"}, "No resources found\n", "", "configmap/y1\n"},
		{[]string{"-l", "app,app!=x"}, "configmap \"y1\" deleted\n", "", ""},
	}
	for _, tc := range tests {
		args := append([]string{"-n", ns, "delete", "cm"}, tc.args...)
		r := k.run(t, "", nil, args...)
		if r.code != 0 || r.stdout != tc.stdout || r.stderr != tc.stderr {
			t.Fatalf("kubectl %s: got %s\nwant exit 0, stdout %q, stderr %q", strings.Join(args, " "), r, tc.stdout, tc.stderr)
		}
		if got := k.configMapNames(t, ns, "app in (x,y)"); got != tc.remaining {
			t.Fatalf("after kubectl %s: got %q, want %q", strings.Join(args, " "), got, tc.remaining)
		}
	}
}

// testKubectlServerSideApply applies server-side, lets another manager
// take fields with `kubectl patch --field-manager`, meets the conflicts
// and forces them.
func testKubectlServerSideApply(t *testing.T, e *env, k *kc) {
	ns := e.newNamespace(t)
	manifest := kcConfigMap("s1", nil, []string{"a=1", "b=1", "c=1"})
	if out := k.apply(t, ns, manifest, "--server-side"); out != "configmap/s1 serverside-applied\n" {
		t.Fatalf("apply --server-side: got %q, want configmap/s1 serverside-applied", out)
	}
	help := "\nPlease review the fields above--they currently have other managers. Here\n"
	tests := []struct {
		patch string
		// conflict is the first line(s) kubectl prints for the 409.
		conflict string
	}{
		{`{"data":{"a":"2"}}`, `error: Apply failed with 1 conflict: conflict with "other" using v1: .data.a`},
		{`{"data":{"b":"2"}}`, "error: Apply failed with 2 conflicts: conflicts with \"other\" using v1:\n- .data.a\n- .data.b"},
	}
	for _, tc := range tests {
		if out := k.ok(t, "-n", ns, "patch", "cm", "s1", "--field-manager", "other", "--type=merge", "-p", tc.patch); out != "configmap/s1 patched\n" {
			t.Fatalf("patch --field-manager other: got %q", out)
		}
		r := k.run(t, manifest, nil, "-n", ns, "apply", "--server-side", "-f", "-")
		if r.code != 1 || !strings.HasPrefix(r.stderr, tc.conflict+help) {
			t.Fatalf("apply --server-side over other's fields: got %s\nwant exit 1 and\n%s%s", r, tc.conflict, help)
		}
	}
	cm := k.configMap(t, ns, "s1")
	if fmt.Sprint(cm.Data) != "map[a:2 b:2 c:1]" {
		t.Fatalf("after the conflicts: got data %v, want a=2 b=2 c=1", cm.Data)
	}

	if out := k.apply(t, ns, manifest, "--server-side", "--force-conflicts"); out != "configmap/s1 serverside-applied\n" {
		t.Fatalf("apply --server-side --force-conflicts: got %q", out)
	}
	cm = k.configMap(t, ns, "s1")
	if fmt.Sprint(cm.Data) != "map[a:1 b:1 c:1]" {
		t.Errorf("after --force-conflicts: got data %v, want a=1 b=1 c=1", cm.Data)
	}
	// other owns nothing any more: its entry is gone.
	var managers []string
	for _, m := range cm.ManagedFields {
		var fields bytes.Buffer
		if m.FieldsV1 != nil {
			if err := json.Compact(&fields, m.FieldsV1.Raw); err != nil {
				t.Fatalf("managedFields of %s: %v", m.Manager, err)
			}
		}
		managers = append(managers, fmt.Sprintf("%s/%s %s", m.Manager, m.Operation, fields.String()))
	}
	if want := `kubectl/Apply {"f:data":{"f:a":{},"f:b":{},"f:c":{}}}`; strings.Join(managers, "; ") != want {
		t.Errorf("managedFields after --force-conflicts: got %q, want %q", managers, want)
	}

	// Applying the same manifest again is a no-op: same resourceVersion.
	k.apply(t, ns, manifest, "--server-side")
	if again := k.configMap(t, ns, "s1"); again.ResourceVersion != cm.ResourceVersion {
		t.Errorf("a no-op apply changed resourceVersion from %s to %s", cm.ResourceVersion, again.ResourceVersion)
	}
}
