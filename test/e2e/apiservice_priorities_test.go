package e2e

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/kapi-dev/kapi/kapitest"
)

// TestAPIServicePrioritiesAsUpstream compares the APIServices the server
// registers for its built-in group-versions, and their priorities (which
// order discovery and kubectl's choice of version), with kube-apiserver
// v1.37.2's (testdata/apiservices-onstart-v1.37.2.txt, recorded from the
// reference; its header says how).
func TestAPIServicePrioritiesAsUpstream(t *testing.T) {
	f, err := os.Open("testdata/apiservices-onstart-v1.37.2.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			want = append(want, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}

	srv := kapitest.Start(t)
	dyn, err := dynamic.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dyn.Resource(apiServiceGVR).List(t.Context(), metav1.ListOptions{LabelSelector: "kube-aggregator.kubernetes.io/automanaged=onstart"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, item := range list.Items {
		spec, _ := item.Object["spec"].(map[string]any)
		got = append(got, fmt.Sprintf("%s %v %v", item.GetName(), spec["groupPriorityMinimum"], spec["versionPriority"]))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		for _, g := range got {
			if !slices.Contains(want, g) {
				t.Errorf("kapi has %q, the reference does not", g)
			}
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("the reference has %q, kapi does not", w)
			}
		}
	}
}
