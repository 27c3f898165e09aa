package flowcontrolv1_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/server/flowcontrol/bootstrap"
)

// decode decodes a manifest through the built-in scheme, which defaults.
func decode(t *testing.T, doc []byte) any {
	t.Helper()
	obj, _, err := scheme.Codecs.UniversalDecoder(flowcontrolv1.SchemeGroupVersion).Decode(doc, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// The docs' examples after defaulting. Expected values: upstream
// pkg/apis/flowcontrol/v1/defaults.go (v1.37) — matchingPrecedence kept
// when set; a limited level without shares gets 30, lendablePercent 0,
// queuing queues 64, handSize 8, queueLengthLimit 50.
func TestDocsExamplesDefaulted(t *testing.T) {
	b, err := os.ReadFile("testdata/docs-examples.yaml")
	if err != nil {
		t.Fatal(err)
	}
	docs := bytes.Split(b, []byte("\n---\n"))
	fs := decode(t, docs[0]).(*flowcontrolv1.FlowSchema)
	if fs.Spec.MatchingPrecedence != 1000 || fs.Spec.DistinguisherMethod != nil {
		t.Errorf("flow schema %+v", fs.Spec)
	}
	pl := decode(t, docs[1]).(*flowcontrolv1.PriorityLevelConfiguration)
	want := flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited,
		Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](30),
			LendablePercent:          ptr.To[int32](0),
			LimitResponse: flowcontrolv1.LimitResponse{
				Type:    flowcontrolv1.LimitResponseTypeQueue,
				Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 8, QueueLengthLimit: 50},
			},
		},
	}
	if diff := cmp.Diff(want, pl.Spec); diff != "" {
		t.Errorf("priority level (-want +got):\n%s", diff)
	}
}

// Unset matchingPrecedence becomes 1000; an exempt section gets 0 shares
// and 0 lendable; an explicit 0 shares is kept (upstream v1 semantics).
func TestDefaults(t *testing.T) {
	fs := decode(t, []byte(`{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":"a"},"spec":{"priorityLevelConfiguration":{"name":"x"}}}`)).(*flowcontrolv1.FlowSchema)
	if fs.Spec.MatchingPrecedence != 1000 {
		t.Errorf("matchingPrecedence %d", fs.Spec.MatchingPrecedence)
	}
	ex := decode(t, []byte(`{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"PriorityLevelConfiguration","metadata":{"name":"exempt"},"spec":{"type":"Exempt","exempt":{}}}`)).(*flowcontrolv1.PriorityLevelConfiguration)
	if diff := cmp.Diff(&flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](0), LendablePercent: ptr.To[int32](0)}, ex.Spec.Exempt); diff != "" {
		t.Errorf("exempt (-want +got):\n%s", diff)
	}
	zero := decode(t, []byte(`{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"PriorityLevelConfiguration","metadata":{"name":"z"},"spec":{"type":"Limited","limited":{"nominalConcurrencyShares":0,"limitResponse":{"type":"Reject"}}}}`)).(*flowcontrolv1.PriorityLevelConfiguration)
	if *zero.Spec.Limited.NominalConcurrencyShares != 0 || zero.Spec.Limited.LimitResponse.Queuing != nil {
		t.Errorf("explicit zero shares: %+v", zero.Spec.Limited)
	}
	list := decode(t, []byte(`{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchemaList","metadata":{},"items":[{"metadata":{"name":"a"},"spec":{"priorityLevelConfiguration":{"name":"x"}}}]}`)).(*flowcontrolv1.FlowSchemaList)
	if list.Items[0].Spec.MatchingPrecedence != 1000 {
		t.Errorf("list item not defaulted")
	}
}

// The bootstrap objects are already in their defaulted form (upstream
// checks the same in its internalbootstrap tests).
func TestBootstrapObjectsAreDefaulted(t *testing.T) {
	for _, pl := range append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...) {
		pl.TypeMeta = metav1.TypeMeta{APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "PriorityLevelConfiguration"}
		b, _ := yaml.Marshal(pl)
		got := decode(t, b).(*flowcontrolv1.PriorityLevelConfiguration)
		if diff := cmp.Diff(pl.Spec, got.Spec); diff != "" {
			t.Errorf("%s changed by defaulting:\n%s", pl.Name, diff)
		}
	}
	for _, fs := range append(bootstrap.MandatoryFlowSchemas(), bootstrap.SuggestedFlowSchemas()...) {
		fs.TypeMeta = metav1.TypeMeta{APIVersion: "flowcontrol.apiserver.k8s.io/v1", Kind: "FlowSchema"}
		b, _ := yaml.Marshal(fs)
		got := decode(t, b).(*flowcontrolv1.FlowSchema)
		if diff := cmp.Diff(fs.Spec, got.Spec); diff != "" {
			t.Errorf("%s changed by defaulting:\n%s", fs.Name, diff)
		}
	}
}
