package apf

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/kapitest"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/bootstrap"
)

// The mandatory and suggested objects are served as upstream defines them
// (golden data: package bootstrap, from upstream's
// apiserver/pkg/apis/flowcontrol/bootstrap/default.go), annotated
// autoupdate-spec=true, and every FlowSchema's Dangling condition is
// False; every classified response names its schema and level.
func TestBootstrapConfiguration(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	for _, want := range append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...) {
		got, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("priority level %s: %v", want.Name, err)
			continue
		}
		if !apiequality.Semantic.DeepEqual(got.Spec, want.Spec) || got.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("priority level %s: %+v %v", want.Name, got.Spec, got.Annotations)
		}
	}
	want := append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...)
	for _, w := range want {
		got, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("flow schema %s: %v", w.Name, err)
			continue
		}
		if !apiequality.Semantic.DeepEqual(got.Spec, w.Spec) || got.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] != "true" {
			t.Errorf("flow schema %s: %+v %v", w.Name, got.Spec, got.Annotations)
		}
	}
	eventually(t, 30*time.Second, "Dangling=False on every FlowSchema", func() error {
		l, err := cs.FlowcontrolV1().FlowSchemas().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		if len(l.Items) != len(want) {
			return errorf("%d flow schemas, want %d", len(l.Items), len(want))
		}
		for _, fs := range l.Items {
			if c := dangling(&fs); c == nil || c.Status != flowcontrolv1.ConditionFalse || c.Reason != "Found" {
				return errorf("%s: Dangling %+v", fs.Name, c)
			}
		}
		return nil
	})

	// The admin (system:masters) is classified exempt.
	ids := newIdentities(t, srv)
	exempt, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, "exempt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	exemptPL, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, "exempt", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, h, _ := ids.adminGet(t, "/api/v1/namespaces")
	if h.Get("X-Kubernetes-PF-FlowSchema-UID") != string(exempt.UID) || h.Get("X-Kubernetes-PF-PriorityLevel-UID") != string(exemptPL.UID) {
		t.Errorf("admin response headers %v, want exempt's UIDs %s %s", h, exempt.UID, exemptPL.UID)
	}
	// Another user: global-default.
	gd, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, h, _, err := ids.as(t, "bob").get(ctx, "/api/v1/namespaces")
	if err != nil || code != http.StatusOK || h.Get("X-Kubernetes-PF-FlowSchema-UID") != string(gd.UID) {
		t.Errorf("bob: %d %v %v", code, err, h)
	}
	// Health checks: the probes schema, exempt.
	probes, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, "probes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, h, _, err = ids.as(t, "bob").get(ctx, "/readyz")
	if err != nil || code != http.StatusOK || h.Get("X-Kubernetes-PF-FlowSchema-UID") != string(probes.UID) || h.Get("X-Kubernetes-PF-PriorityLevel-UID") != string(exemptPL.UID) {
		t.Errorf("/readyz: %d %v %v", code, err, h)
	}

	// The metrics are in /metrics with upstream's names.
	fams := ids.metrics(t)
	for _, name := range []string{"apiserver_flowcontrol_dispatched_requests_total", "apiserver_flowcontrol_current_executing_seats",
		"apiserver_flowcontrol_request_wait_duration_seconds", "apiserver_flowcontrol_nominal_limit_seats"} {
		if fams[name] == nil {
			t.Errorf("metric %s missing", name)
		}
	}
	if n := counterSum(fams, "apiserver_flowcontrol_dispatched_requests_total", map[string]string{"flow_schema": "global-default", "priority_level": "global-default"}); n < 1 {
		t.Errorf("dispatched in global-default: %v", n)
	}
	// 600 seats: global-default's nominal ceil(600*20/245) = 49.
	if n := counterSum(fams, "apiserver_flowcontrol_nominal_limit_seats", map[string]string{"priority_level": "global-default"}); n != 49 {
		t.Errorf("global-default nominal limit %v, want 49", n)
	}

	// A watch holds its seat until it is established, not while it runs:
	// with bob's watch open, nothing executes in global-default.
	wctx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	bob := ids.as(t, "bob")
	req, _ := http.NewRequestWithContext(wctx, http.MethodGet, srv.Config.Host+"/api/v1/namespaces?watch=true", nil)
	req.Header.Set("X-Remote-User", "bob")
	res, err := bob.client.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("watch: %v %v", err, res)
	}
	defer res.Body.Close()
	if res.Header.Get("X-Kubernetes-PF-FlowSchema-UID") != string(gd.UID) {
		t.Errorf("watch headers %v", res.Header)
	}
	eventually(t, 10*time.Second, "no seat held by the open watch", func() error {
		m := ids.metrics(t)
		if n := counterSum(m, "apiserver_flowcontrol_current_executing_seats", map[string]string{"priority_level": "global-default"}); n != 0 {
			return errorf("%v seats executing in global-default", n)
		}
		return nil
	})

	// The debug dumps: system:masters only.
	for _, dump := range []string{"dump_priority_levels", "dump_queues", "dump_requests"} {
		path := "/debug/api_priority_and_fairness/" + dump
		code, _, body := ids.adminGet(t, path)
		if code != http.StatusOK || !strings.HasPrefix(body, "PriorityLevelName,") {
			t.Errorf("%s as admin: %d %q", path, code, body)
		}
		if dump == "dump_priority_levels" && !strings.Contains(body, "\nglobal-default,") {
			t.Errorf("%s lacks global-default: %q", path, body)
		}
		code, _, _, err := ids.as(t, "bob", "system:authenticated").get(ctx, path)
		if err != nil || code != http.StatusForbidden {
			t.Errorf("%s as bob: %d %v, want 403", path, code, err)
		}
	}
}

func dangling(fs *flowcontrolv1.FlowSchema) *flowcontrolv1.FlowSchemaCondition {
	for i := range fs.Status.Conditions {
		if fs.Status.Conditions[i].Type == flowcontrolv1.FlowSchemaConditionDangling {
			return &fs.Status.Conditions[i]
		}
	}
	return nil
}

// A FlowSchema naming a missing priority level is Dangling (True,
// NotFound) until the level is created; its requests go to the next
// matching schema meanwhile. The Table shows it in MISSINGPL.
func TestDanglingAndTables(t *testing.T) {
	srv := kapitest.Start(t)
	cs := kubernetes.NewForConfigOrDie(srv.Config)
	ctx := t.Context()
	fs := &flowcontrolv1.FlowSchema{
		ObjectMeta: metav1.ObjectMeta{Name: "carol"},
		Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "carols-level"},
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects:         []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "carol"}}},
				NonResourceRules: []flowcontrolv1.NonResourcePolicyRule{{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}}},
				ResourceRules:    []flowcontrolv1.ResourcePolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"}}},
			}},
		},
	}
	created, err := cs.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Spec.MatchingPrecedence != 1000 {
		t.Errorf("matchingPrecedence defaulted to %d, want 1000", created.Spec.MatchingPrecedence)
	}
	waitDangling := func(status flowcontrolv1.ConditionStatus, reason string) {
		eventually(t, 30*time.Second, "Dangling "+string(status), func() error {
			got, err := cs.FlowcontrolV1().FlowSchemas().Get(ctx, "carol", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if c := dangling(got); c == nil || c.Status != status || c.Reason != reason {
				return errorf("Dangling %+v", c)
			}
			return nil
		})
	}
	waitDangling(flowcontrolv1.ConditionTrue, "NotFound")
	ids := newIdentities(t, srv)
	gd, _ := cs.FlowcontrolV1().FlowSchemas().Get(ctx, "global-default", metav1.GetOptions{})
	if _, h, _, _ := ids.as(t, "carol").get(ctx, "/api/v1/namespaces"); h.Get("X-Kubernetes-PF-FlowSchema-UID") != string(gd.UID) {
		t.Errorf("carol with a dangling schema: classified %v, want global-default", h)
	}
	// Tables, as kubectl asks for them.
	table := func(resource string) *metav1.Table {
		t.Helper()
		res := cs.FlowcontrolV1().RESTClient().Get().Resource(resource).SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx)
		raw, err := res.Raw()
		if err != nil {
			t.Fatalf("table of %s: %v", resource, err)
		}
		var tbl metav1.Table
		if err := json.Unmarshal(raw, &tbl); err != nil {
			t.Fatal(err)
		}
		return &tbl
	}
	cols := func(tbl *metav1.Table) string {
		var names []string
		for _, c := range tbl.ColumnDefinitions {
			names = append(names, c.Name)
		}
		return strings.Join(names, ",")
	}
	fsTable := table("flowschemas")
	// Upstream printers.go flowSchemaColumnDefinitions.
	if got := cols(fsTable); got != "Name,PriorityLevel,MatchingPrecedence,DistinguisherMethod,Age,MissingPL" {
		t.Errorf("flowschemas columns %s", got)
	}
	for _, row := range fsTable.Rows {
		if row.Cells[0] == "carol" && (row.Cells[1] != "carols-level" || row.Cells[2] != float64(1000) || row.Cells[3] != "<none>" || row.Cells[5] != "True") {
			t.Errorf("carol's row %v", row.Cells)
		}
		if row.Cells[0] == "global-default" && (row.Cells[3] != "ByUser" || row.Cells[5] != "False") {
			t.Errorf("global-default's row %v", row.Cells)
		}
	}
	plTable := table("prioritylevelconfigurations")
	// Upstream printers.go priorityLevelConfigurationColumnDefinitions.
	if got := cols(plTable); got != "Name,Type,NominalConcurrencyShares,Queues,HandSize,QueueLengthLimit,Age" {
		t.Errorf("prioritylevelconfigurations columns %s", got)
	}
	rows := map[string][]any{}
	for _, row := range plTable.Rows {
		rows[row.Cells[0].(string)] = row.Cells[:6]
	}
	for name, want := range map[string][]any{
		"exempt":        {"exempt", "Exempt", "<none>", "<none>", "<none>", "<none>"},
		"catch-all":     {"catch-all", "Limited", float64(5), "<none>", "<none>", "<none>"},
		"workload-high": {"workload-high", "Limited", float64(40), float64(128), float64(6), float64(50)},
	} {
		if !apiequality.Semantic.DeepEqual(rows[name], want) {
			t.Errorf("%s row %v, want %v", name, rows[name], want)
		}
	}
	kubectlGet(t, srv, "flowschemas", "MISSINGPL")
	kubectlGet(t, srv, "prioritylevelconfigurations", "NOMINALCONCURRENCYSHARES")

	// Creating the level resolves the dangling reference.
	if _, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Create(ctx, &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "carols-level"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDangling(flowcontrolv1.ConditionFalse, "Found")
	pl, err := cs.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, "carols-level", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Upstream's v1 defaults: 30 shares, lendable 0, 64 queues of 50, hands of 8.
	if l := pl.Spec.Limited; *l.NominalConcurrencyShares != 30 || *l.LendablePercent != 0 || *l.LimitResponse.Queuing != (flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 8, QueueLengthLimit: 50}) {
		t.Errorf("defaults %+v %+v", l, l.LimitResponse.Queuing)
	}
	eventually(t, 30*time.Second, "carol classified by carol", func() error {
		_, h, _, err := ids.as(t, "carol").get(ctx, "/api/v1/namespaces")
		if err != nil {
			return err
		}
		if h.Get("X-Kubernetes-PF-FlowSchema-UID") != string(created.UID) || h.Get("X-Kubernetes-PF-PriorityLevel-UID") != string(pl.UID) {
			return errorf("headers %v", h)
		}
		return nil
	})
}

// kubectlGet runs kubectl get <resource> and checks a column header, with
// each kubectl found (skipped when none is, except under CI=true).
func kubectlGet(t *testing.T, srv *kapitest.Server, resource, column string) {
	t.Helper()
	var found []string
	for _, k := range []string{"/usr/lib/google-cloud-sdk/bin/kubectl.1.27", "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"} {
		if _, err := os.Stat(k); err == nil {
			found = append(found, k)
		}
	}
	if len(found) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("no kubectl found")
		}
		t.Skip("no kubectl found")
	}
	for _, k := range found {
		out, err := exec.Command(k, "--kubeconfig", srv.Kubeconfig, "get", resource).CombinedOutput()
		if err != nil || !strings.Contains(string(out), column) {
			t.Errorf("%s get %s: %v\n%s", filepath.Base(k), resource, err, out)
		}
	}
}

// The bootstrap ensurer at start: missing objects are re-created, changed
// ones restored unless their autoupdate-spec annotation is false; the
// mandatory objects' specs cannot be changed at all.
func TestAutoUpdateSpecAcrossRestart(t *testing.T) {
	srv := startRestartable(t)
	cs := srv.clientset()
	ctx := context.Background()
	pls := cs.FlowcontrolV1().PriorityLevelConfigurations()
	// workload-low: the operator's, annotation false.
	wl, err := pls.Get(ctx, "workload-low", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wl.Annotations[flowcontrolv1.AutoUpdateAnnotationKey] = "false"
	wl.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](7)
	if _, err := pls.Update(ctx, wl, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// global-default: changed, annotation still true.
	gd, err := pls.Get(ctx, "global-default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gd.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](3)
	if _, err := pls.Update(ctx, gd, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// system: deleted.
	if err := pls.Delete(ctx, "system", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// catch-all: mandatory, its spec is fixed.
	ca, err := pls.Get(ctx, "catch-all", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ca.Spec.Limited.NominalConcurrencyShares = ptr.To[int32](50)
	if _, err := pls.Update(ctx, ca, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec of 'catch-all' except the 'spec.exempt' field must equal the fixed value") {
		t.Errorf("changing catch-all: %v, want 422", err)
	}
	cs = srv.restart()
	pls = cs.FlowcontrolV1().PriorityLevelConfigurations()
	if wl, err := pls.Get(ctx, "workload-low", metav1.GetOptions{}); err != nil || *wl.Spec.Limited.NominalConcurrencyShares != 7 {
		t.Errorf("workload-low (autoupdate-spec false) after restart: %v %v", err, wl.Spec.Limited)
	}
	if gd, err := pls.Get(ctx, "global-default", metav1.GetOptions{}); err != nil || *gd.Spec.Limited.NominalConcurrencyShares != 20 {
		t.Errorf("global-default (autoupdate-spec true) after restart: %v %v, want restored to 20 shares", err, gd.Spec.Limited)
	}
	if sys, err := pls.Get(ctx, "system", metav1.GetOptions{}); err != nil || *sys.Spec.Limited.NominalConcurrencyShares != 30 {
		t.Errorf("system after restart: %v, want re-created", err)
	}
}

// Objects the bootstrap ensurer no longer wants (a data dir made by an
// older kapi, or an older kube-apiserver, holds workload-leader-election
// and endpoint-controller) are deleted at start when their autoupdate-spec
// annotation parses as true, and kept when it is false, malformed or
// absent: upstream's RemoveUnwantedObjects in
// kubernetes/pkg/registry/flowcontrol/ensurer/strategy.go (v1.37.2).
func TestObsoleteSuggestedRemovedAtRestart(t *testing.T) {
	srv := startRestartable(t)
	cs := srv.clientset()
	ctx := context.Background()
	fss := cs.FlowcontrolV1().FlowSchemas()
	pls := cs.FlowcontrolV1().PriorityLevelConfigurations()
	// annotation value per object; "" = no annotation.
	schemas := map[string]string{
		"workload-leader-election": "true",
		"endpoint-controller":      "false",
		"obsolete-capital-true":    "True",
		"obsolete-malformed":       "yes",
		"operator-schema":          "",
	}
	levels := map[string]string{
		"obsolete-level":  "true",
		"operator-level":  "",
		"kept-level-zero": "0",
	}
	meta := func(name, v string) metav1.ObjectMeta {
		m := metav1.ObjectMeta{Name: name}
		if v != "" {
			m.Annotations = map[string]string{flowcontrolv1.AutoUpdateAnnotationKey: v}
		}
		return m
	}
	for name, v := range schemas {
		f := &flowcontrolv1.FlowSchema{ObjectMeta: meta(name, v), Spec: flowcontrolv1.FlowSchemaSpec{
			PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-high"},
			MatchingPrecedence:         200,
			Rules: []flowcontrolv1.PolicyRulesWithSubjects{{
				Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindUser, User: &flowcontrolv1.UserSubject{Name: "system:kube-controller-manager"}}},
				ResourceRules: []flowcontrolv1.ResourcePolicyRule{{
					Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"endpoints"}, Namespaces: []string{"*"},
				}},
			}},
		}}
		if _, err := fss.Create(ctx, f, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, v := range levels {
		p := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: meta(name, v), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](1),
				LimitResponse:            flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeReject},
			},
		}}
		if _, err := pls.Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cs = srv.restart()
	fss = cs.FlowcontrolV1().FlowSchemas()
	pls = cs.FlowcontrolV1().PriorityLevelConfigurations()
	gone := func(v string) bool { b, err := strconv.ParseBool(v); return err == nil && b }
	for name, v := range schemas {
		_, err := fss.Get(ctx, name, metav1.GetOptions{})
		switch {
		case gone(v) && !apierrors.IsNotFound(err):
			t.Errorf("flowschema %s (autoupdate-spec %q) after restart: %v, want deleted", name, v, err)
		case !gone(v) && err != nil:
			t.Errorf("flowschema %s (autoupdate-spec %q) after restart: %v, want kept", name, v, err)
		}
	}
	for name, v := range levels {
		_, err := pls.Get(ctx, name, metav1.GetOptions{})
		switch {
		case gone(v) && !apierrors.IsNotFound(err):
			t.Errorf("prioritylevelconfiguration %s (autoupdate-spec %q) after restart: %v, want deleted", name, v, err)
		case !gone(v) && err != nil:
			t.Errorf("prioritylevelconfiguration %s (autoupdate-spec %q) after restart: %v, want kept", name, v, err)
		}
	}
	// Mandatory and suggested objects are all still there.
	for _, f := range append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...) {
		if _, err := fss.Get(ctx, f.Name, metav1.GetOptions{}); err != nil {
			t.Errorf("flowschema %s after restart: %v", f.Name, err)
		}
	}
}

// restartable is one kapi on embedded etcd that a test stops and starts
// again on the same data dir; it is stopped when the test ends.
type restartable struct {
	t   *testing.T
	dir string
	srv *kapitest.Server
}

func startRestartable(t *testing.T) *restartable {
	r := &restartable{t: t, dir: t.TempDir()}
	r.start()
	t.Cleanup(func() {
		if r.srv != nil {
			_ = r.srv.Stop()
		}
	})
	return r
}

func (r *restartable) start() {
	r.t.Helper()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	srv, err := kapitest.StartE(r.dir, logger, kapitest.WithEmbeddedEtcd())
	if err != nil {
		r.t.Fatal(err)
	}
	r.srv = srv
}

func (r *restartable) clientset() *kubernetes.Clientset {
	return kubernetes.NewForConfigOrDie(r.srv.Config)
}

// restart stops the server and starts it again on its data dir.
func (r *restartable) restart() *kubernetes.Clientset {
	r.t.Helper()
	srv := r.srv
	r.srv = nil
	if err := srv.Stop(); err != nil {
		r.t.Fatal(err)
	}
	r.start()
	return r.clientset()
}
