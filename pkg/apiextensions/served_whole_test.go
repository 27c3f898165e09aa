package apiextensions

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kapi-dev/kapi/pkg/apiextensions/internal/crdtest"
)

// aggregatedV2 asks for aggregated discovery (apidiscovery.k8s.io/v2).
const aggregatedV2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// poller watches, in a tight loop, everything a client learns a CRD's
// versions from: aggregated discovery (/apis), the group's legacy
// discovery (/apis/<group>), each version's resource list and each
// version's collection. What it sees must be all or nothing: no version
// served without the others, nothing before the CRD is Established.
type poller struct {
	ts       *testServer
	group    string
	versions []string
	resource string
	crd      string

	mu       sync.Mutex
	failures []string
	rounds   int
	served   int // rounds that found the CRD served
}

func (p *poller) failf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.failures) < 10 {
		p.failures = append(p.failures, fmt.Sprintf(format, args...))
	}
}

func (p *poller) get(client *http.Client, path, accept string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, p.ts.srv.URL+path, nil)
	if err != nil {
		return 0, nil, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// round looks once, the versions in order (reverse when reverse is set),
// and checks what it saw.
func (p *poller) round(client *http.Client, reverse bool) error {
	versions := slices.Clone(p.versions)
	if reverse {
		slices.Reverse(versions)
	}
	var seen []string // what showed the CRD served

	code, body, err := p.get(client, "/apis", aggregatedV2)
	if err != nil || code != http.StatusOK {
		return fmt.Errorf("aggregated discovery: %d %v", code, err)
	}
	var agg apidiscoveryv2.APIGroupDiscoveryList
	if err := json.Unmarshal(body, &agg); err != nil {
		return err
	}
	var aggVersions []string
	for _, g := range agg.Items {
		if g.Name != p.group {
			continue
		}
		for _, v := range g.Versions {
			if slices.ContainsFunc(v.Resources, func(r apidiscoveryv2.APIResourceDiscovery) bool { return r.Resource == p.resource }) {
				aggVersions = append(aggVersions, v.Version)
			}
		}
	}
	if len(aggVersions) > 0 {
		seen = append(seen, "aggregated discovery")
		if len(aggVersions) != len(p.versions) {
			p.failf("aggregated discovery lists versions %v of %v", aggVersions, p.versions)
		}
	}

	code, body, err = p.get(client, "/apis/"+p.group, "")
	if err != nil {
		return err
	}
	if code == http.StatusOK {
		var g metav1.APIGroup
		if err := json.Unmarshal(body, &g); err != nil {
			return err
		}
		seen = append(seen, "/apis/"+p.group)
		if len(g.Versions) != len(p.versions) {
			p.failf("/apis/%s lists %v of %v", p.group, g.Versions, p.versions)
		}
	}

	var listed, collections []string
	for _, v := range versions {
		root := "/apis/" + p.group + "/" + v
		code, body, err := p.get(client, root, "")
		if err != nil {
			return err
		}
		if code == http.StatusOK {
			var rl metav1.APIResourceList
			if err := json.Unmarshal(body, &rl); err != nil {
				return err
			}
			if slices.ContainsFunc(rl.APIResources, func(r metav1.APIResource) bool { return r.Name == p.resource }) {
				listed = append(listed, v)
			}
		}
		code, _, err = p.get(client, root+"/namespaces/ns/"+p.resource, "")
		if err != nil {
			return err
		}
		switch code {
		case http.StatusOK:
			collections = append(collections, v)
		case http.StatusNotFound, http.StatusServiceUnavailable:
		default:
			p.failf("GET %s/namespaces/ns/%s: %d", root, p.resource, code)
		}
	}
	// The versions are looked at one after another: once one answers,
	// the ones after it (served in the same step, never removed in this
	// test) must too; one before it may not have been served yet.
	for _, c := range []struct {
		what string
		got  []string
	}{{"resource lists", listed}, {"collections", collections}} {
		for i, v := range versions {
			if slices.Contains(c.got, v) && !isSubset(versions[i:], c.got) {
				p.failf("%s: %v answered, looked at in the order %v: %s without every later one", c.what, c.got, versions, v)
			}
		}
	}
	if len(listed) > 0 {
		seen = append(seen, fmt.Sprintf("resource lists %v", listed))
	}
	if len(collections) > 0 {
		seen = append(seen, fmt.Sprintf("collections %v", collections))
	}
	if len(seen) == 0 {
		p.mu.Lock()
		p.rounds++
		p.mu.Unlock()
		return nil
	}
	// Whatever showed the CRD served, the CRD read now must be
	// Established.
	code, body, err = p.get(client, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+p.crd, "")
	if err != nil || code != http.StatusOK {
		return fmt.Errorf("get the CRD after seeing %v: %d %v", seen, code, err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := json.Unmarshal(body, &crd); err != nil {
		return err
	}
	if !isConditionTrue(&crd, apiextensionsv1.Established) {
		p.failf("%v seen before the CRD is Established (conditions %+v)", seen, crd.Status.Conditions)
	}
	p.mu.Lock()
	p.rounds++
	p.served++
	p.mu.Unlock()
	return nil
}

// TestCRDServedWhole creates a CRD of two versions while pollers look at
// discovery and at both versions' collections in tight loops: no poller
// sees one version without the other, nor any version before the CRD is
// Established (issue 11, point 2).
func TestCRDServedWhole(t *testing.T) {
	ts := startServer(t, serverOptions{})
	crd := crdtest.NewCRD("poll.example.com", "widgets", "Widget", apiextensionsv1.NamespaceScoped)
	v2 := *crd.Spec.Versions[0].DeepCopy()
	v2.Name, v2.Storage = "v2", false
	crd.Spec.Versions = append(crd.Spec.Versions, v2)
	p := &poller{ts: ts, group: "poll.example.com", versions: []string{"v1", "v2"}, resource: "widgets", crd: crd.Name}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Pollers keep going until they have seen the CRD served for a while.
	const servedRounds = 20
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := ts.srv.Client()
			for n := 0; ctx.Err() == nil; n++ {
				if err := p.round(client, (n+i)%2 == 1); err != nil {
					errs <- err
					return
				}
				p.mu.Lock()
				done := p.served >= servedRounds
				p.mu.Unlock()
				if done {
					return
				}
			}
		}()
	}
	// Let the pollers look at the unserved CRD first.
	eventually(t, waitTimeout, "pollers running", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.rounds >= 3
	})
	if _, err := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions().Create(context.Background(), crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the CRD was not seen served within 60s (%d rounds)", p.rounds)
	}
	for _, f := range p.failures {
		t.Error(f)
	}
	t.Logf("%d rounds, %d with the CRD served", p.rounds, p.served)
}

// isSubset reports whether every element of a is in b.
func isSubset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// TestEstablishedMeansServed creates CRDs while watching them: as soon as
// the watch shows a CRD Established, every served version answers (the
// controller shows a CRD after writing Established; requests that come
// in between wait for it instead of answering 404).
func TestEstablishedMeansServed(t *testing.T) {
	ts := startServer(t, serverOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	crds := ts.crdClient(t).ApiextensionsV1().CustomResourceDefinitions()
	w, err := crds.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	client := ts.srv.Client()
	const n = 10
	for i := range n {
		// Every other CRD joins a group-version already served.
		crd := crdtest.NewCRD(fmt.Sprintf("e%d.example.com", i/2), fmt.Sprintf("things%d", i), fmt.Sprintf("Thing%d", i), apiextensionsv1.NamespaceScoped)
		crd.Spec.Names.ShortNames = nil // NewCRD's would conflict in a group
		v2 := *crd.Spec.Versions[0].DeepCopy()
		v2.Name, v2.Storage = "v2", false
		crd.Spec.Versions = append(crd.Spec.Versions, v2)
		if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for established := false; !established; {
			var ev watch.Event
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					t.Fatal("watch ended")
				}
				ev = e
			case <-ctx.Done():
				t.Fatalf("%s not Established within %v", crd.Name, waitTimeout)
			}
			got, ok := ev.Object.(*apiextensionsv1.CustomResourceDefinition)
			if !ok || got.Name != crd.Name || !isConditionTrue(got, apiextensionsv1.Established) {
				continue
			}
			established = true
			for _, v := range []string{"v1", "v2"} {
				path := fmt.Sprintf("/apis/%s/%s/namespaces/ns/%s", crd.Spec.Group, v, crd.Spec.Names.Plural)
				resp, err := client.Get(ts.srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s right after the watch showed it Established: %d", path, resp.StatusCode)
				}
			}
		}
	}
}
