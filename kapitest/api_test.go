package kapitest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kapi-dev/kapi/internal/testwait"
	"github.com/kapi-dev/kapi/kapitest"
)

var (
	widgets = schema.GroupVersionResource{Group: "test.kapi.dev", Version: "v1", Resource: "widgets"}
	gadgets = schema.GroupVersionResource{Group: "test.kapi.dev", Version: "v2", Resource: "gadgets"}
	things  = schema.GroupVersionResource{Group: "objects.kapi.dev", Version: "v1", Resource: "things"}
)

func thingCRD() *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "things.objects.kapi.dev"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "objects.kapi.dev",
			Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr(true),
				}},
			}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func obj(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// CRDs from a directory (two of three documents, the .txt file skipped)
// and from an object are served when Start returns: the first request
// to each succeeds, with no wait.
func TestCRDInstall(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithCRDs(kapitest.CRDInstallOptions{
		Paths:              []string{"testdata/crds", "testdata/no-such-dir"},
		ErrorIfPathMissing: false,
		CRDs:               []*apiextensionsv1.CustomResourceDefinition{thingCRD()},
	}))
	dyn := dynamic.NewForConfigOrDie(srv.Config)
	ctx := context.Background()
	if _, err := dyn.Resource(widgets).Namespace("default").Create(ctx, obj("test.kapi.dev/v1", "Widget", "default", "w1"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a widget right after Start: %v", err)
	}
	if _, err := dyn.Resource(gadgets).Create(ctx, obj("test.kapi.dev/v2", "Gadget", "", "g1"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a gadget (v2, not the storage version) right after Start: %v", err)
	}
	if _, err := dyn.Resource(things).Namespace("default").Create(ctx, obj("objects.kapi.dev/v1", "Thing", "default", "t1"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a thing (CRD object) right after Start: %v", err)
	}
	if _, err := kubernetes.NewForConfigOrDie(srv.Config).CoreV1().ConfigMaps("default").Get(ctx, "not-a-crd", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ConfigMap document of the CRD file: got %v, want NotFound (only CRDs are installed)", err)
	}
}

func TestCRDInstallErrors(t *testing.T) {
	for name, o := range map[string]kapitest.CRDInstallOptions{
		"missing path": {Paths: []string{"testdata/no-such-dir"}, ErrorIfPathMissing: true},
		"invalid CRD": {CRDs: []*apiextensionsv1.CustomResourceDefinition{{
			ObjectMeta: metav1.ObjectMeta{Name: "bad"},
		}}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := kapitest.StartE(t.TempDir(), nil, kapitest.WithCRDs(o))
			if err == nil {
				t.Fatal("Start succeeded, want an error")
			}
			t.Logf("error (expected): %v", err)
			if name == "missing path" && !strings.Contains(err.Error(), "no-such-dir") {
				t.Errorf("got %v, want the missing path named", err)
			}
			if name == "invalid CRD" && !strings.Contains(err.Error(), "install CRD bad") {
				t.Errorf("got %v, want the CRD's name and the server's refusal", err)
			}
		})
	}
}

// AddUser's config authenticates as the user, in its groups, with a
// certificate of the server's CA.
func TestAddUser(t *testing.T) {
	srv := kapitest.Start(t)
	cfg, err := srv.AddUser(kapitest.User{Name: "alice", Groups: []string{"devs", "qa"}})
	if err != nil {
		t.Fatal(err)
	}
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := review.Status.UserInfo
	if got.Username != "alice" || !slices.Contains(got.Groups, "devs") || !slices.Contains(got.Groups, "qa") || !slices.Contains(got.Groups, "system:authenticated") {
		t.Errorf("got user %q groups %v, want alice in devs, qa and system:authenticated", got.Username, got.Groups)
	}
	if _, err := srv.AddUser(kapitest.User{}); err == nil {
		t.Error("AddUser without a name succeeded, want an error")
	}
}

func TestKubernetesVersion(t *testing.T) {
	srv := kapitest.Start(t, kapitest.WithKubernetesVersion("v1.31.4"))
	v, err := kubernetes.NewForConfigOrDie(srv.Config).Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.Major != "1" || v.Minor != "31" || v.GitVersion != "v1.31.4" {
		t.Errorf("got %+v, want 1.31 v1.31.4", v)
	}
	if _, err := kapitest.StartE(t.TempDir(), nil, kapitest.WithKubernetesVersion("one.two")); err == nil || !strings.Contains(err.Error(), `"one.two"`) {
		t.Errorf("a bad version: got %v, want an error naming it", err)
	}
}

// 50 servers start in parallel in one process, each with its own port,
// storage and PKI: an object written to one is on no other.
func TestFiftyServersInParallel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 50 servers")
	}
	const n = 50
	servers := make([]*kapitest.Server, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			// 50 starts at once under the race detector on a shared
			// machine can take minutes.
			servers[i], errs[i] = kapitest.StartE(filepath.Join(t.TempDir(), fmt.Sprint(i)), slog.New(slog.DiscardHandler),
				kapitest.WithOptions(func(o *kapitest.Options) { o.StartTimeout = 5 * time.Minute }))
		})
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, s := range servers {
			if s != nil {
				if err := s.Stop(); err != nil {
					t.Error(err)
				}
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
	}
	// The servers are checked one at a time, every create before any
	// list. Checked all at once, 50 fresh TLS connections met 50 servers
	// still starting their controllers: at load 16 the process had a
	// fifth of a core, client-go's 10 s TLS handshake timeout ran out and
	// some requests got "unexpected EOF" (the HTTP/2 server drops a
	// connection whose first SETTINGS frame it has not read within 2 s;
	// x/net, as upstream). Isolation needs no concurrency.
	addrs := map[string]bool{}
	for i, s := range servers {
		addrs[s.Address] = true
		cs := kubernetes.NewForConfigOrDie(s.Config)
		ctx := context.Background()
		name := fmt.Sprintf("server-%d", i)
		err := retryConnectionErrors(func(retried bool) error {
			_, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
			if retried && apierrors.IsAlreadyExists(err) {
				return nil // the lost answer's create took place
			}
			return err
		})
		if err != nil {
			t.Errorf("server %d: %v", i, err)
		}
	}
	for i, s := range servers {
		var list *corev1.ConfigMapList
		err := retryConnectionErrors(func(bool) (err error) {
			list, err = kubernetes.NewForConfigOrDie(s.Config).CoreV1().ConfigMaps("default").List(context.Background(), metav1.ListOptions{})
			return err
		})
		if err != nil {
			t.Errorf("server %d: %v", i, err)
			continue
		}
		var names []string
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, "server-") {
				names = append(names, cm.Name)
			}
		}
		if want := fmt.Sprintf("server-%d", i); !slices.Equal(names, []string{want}) {
			t.Errorf("server %d holds %v, want only its own %s", i, names, want)
		}
	}
	if len(addrs) != n {
		t.Errorf("%d distinct addresses for %d servers", len(addrs), n)
	}
}

// retryConnectionErrors runs f up to five times while it fails below
// HTTP: a TLS handshake timeout or a connection closed before the answer
// ("unexpected EOF": x/net's HTTP/2 server closes a connection whose client
// has not acknowledged its SETTINGS within 2 s, which a client starved of
// CPU by 50 servers settling down at load 16 did not). Those are the
// machine's, not a server's answer; an HTTP status is never retried. f is
// told whether it runs again after such a failure.
func retryConnectionErrors(f func(retried bool) error) error {
	var err error
	for attempt := range 5 {
		if err = f(attempt > 0); err == nil {
			return nil
		}
		var status apierrors.APIStatus
		if errors.As(err, &status) || !(errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "TLS handshake timeout")) {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	return err
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 10*time.Second, 5*time.Millisecond, what, cond)
}

func crds(c ...*apiextensionsv1.CustomResourceDefinition) []*apiextensionsv1.CustomResourceDefinition {
	return c
}
