package prioritylevelconfiguration

import (
	"slices"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/kapi-dev/kapi/pkg/api/scheme"
	"github.com/kapi-dev/kapi/pkg/registry/registrytest"
)

// TestValidationAsDeclarative checks whole error lists, order and words,
// against kube-apiserver v1.37.2, where beta declarative rules
// (k8s.io/kubernetes@v1.37.2
// pkg/apis/flowcontrol/v1/zz_generated.validations.go) replace the
// handwritten errors on the spec's unions and required types: the unions of
// exempt and limited with type and of limitResponse.queuing with its type
// come first (type-level rules), then type and limitResponse.type
// "Required value", all after the handwritten errors; they look into
// limited whatever the type. The want lists are kube-apiserver v1.37.2's
// answers to the same (defaulted) objects, created with kubectl create --raw
// on 2026-11-27; the update is a PUT over a valid Limited/Reject level.
func TestValidationAsDeclarative(t *testing.T) {
	store, _, err := NewREST(registrytest.Options(t))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Destroy()
	ctx := registrytest.Context("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", "")
	limited := func(lr flowcontrolv1.LimitResponse) *flowcontrolv1.LimitedPriorityLevelConfiguration {
		return &flowcontrolv1.LimitedPriorityLevelConfiguration{LimitResponse: lr}
	}
	for _, c := range []struct {
		name string
		spec flowcontrolv1.PriorityLevelConfigurationSpec
		want []string
	}{{
		name: "limited type with exempt",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](1)}},
		want: []string{`spec.exempt: Forbidden`, `spec.limited: Required value`},
	}, {
		name: "exempt type with limited, queuing on reject",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Exempt", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](-1),
			LimitResponse:            flowcontrolv1.LimitResponse{Type: "Reject", Queuing: &flowcontrolv1.QueuingConfiguration{}},
		}},
		want: []string{
			"spec.type: Invalid value: \"Exempt\": must be 'Exempt' if and only if `name` is 'exempt'",
			`spec.limited: Forbidden`,
			`spec.limited.limitResponse.queuing: Forbidden`,
		},
	}, {
		name: "queue without queuing",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](-1), LendablePercent: ptr.To[int32](200),
			LimitResponse: flowcontrolv1.LimitResponse{Type: "Queue"},
		}},
		want: []string{
			`spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer`,
			`spec.limited.lendablePercent: Invalid value: 200: must be between 0 and 100, inclusive`,
			`spec.limited.limitResponse.queuing: Required value`,
		},
	}, {
		name: "no types",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Limited: limited(flowcontrolv1.LimitResponse{}), Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{}},
		want: []string{
			`spec.exempt: Forbidden`,
			`spec.limited: Forbidden`,
			`spec.type: Required value`,
			`spec.limited.limitResponse.type: Required value`,
		},
	}, {
		name: "unsupported types",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Bogus"},
		want: []string{`spec.type: Unsupported value: "Bogus": supported values: "Exempt", "Limited"`},
	}, {
		name: "unsupported limit response with queuing",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: limited(flowcontrolv1.LimitResponse{Type: "Bogus",
			Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 2}})},
		want: []string{
			`spec.limited.limitResponse.type: Unsupported value: "Bogus": supported values: "Queue", "Reject"`,
			`spec.limited.limitResponse.queuing: Forbidden`,
		},
	}, {
		name: "handwritten order of a limited level",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr.To[int32](-1), LendablePercent: ptr.To[int32](101), BorrowingLimitPercent: ptr.To[int32](-1),
			LimitResponse: flowcontrolv1.LimitResponse{Type: "Queue", Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 1, HandSize: 2}},
		}},
		want: []string{
			`spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer`,
			`spec.limited.limitResponse.queuing.handSize: Invalid value: 2: should not be greater than queues (1)`,
			`spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive`,
			`spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer`,
		},
	}, {
		name: "too many queues",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: limited(flowcontrolv1.LimitResponse{Type: "Queue",
			Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 20000000}})},
		want: []string{
			`spec.limited.limitResponse.queuing.queues: Invalid value: 20000000: must not be greater than 10000000`,
			`spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 20000000 and handSize 8 should not be greater than 60`,
		},
	}, {
		name: "no limit response type, queuing",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: limited(flowcontrolv1.LimitResponse{Queuing: &flowcontrolv1.QueuingConfiguration{}})},
		want: []string{`spec.limited.limitResponse.queuing: Forbidden`, `spec.limited.limitResponse.type: Required value`},
	}, {
		name: "exempt type, bad exempt and limited",
		spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Exempt",
			Exempt:  &flowcontrolv1.ExemptPriorityLevelConfiguration{NominalConcurrencyShares: ptr.To[int32](-1), LendablePercent: ptr.To[int32](-1)},
			Limited: limited(flowcontrolv1.LimitResponse{Type: "Queue"})},
		want: []string{
			"spec.type: Invalid value: \"Exempt\": must be 'Exempt' if and only if `name` is 'exempt'",
			`spec.exempt.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer`,
			`spec.exempt.lendablePercent: Invalid value: -1: must be between 0 and 100, inclusive`,
			`spec.limited: Forbidden`,
			`spec.limited.limitResponse.queuing: Required value`,
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			pl := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "dv12-plc"}, Spec: c.spec}
			scheme.Scheme.Default(pl)
			_, err := store.Create(ctx, pl, nil, &metav1.CreateOptions{})
			if got := registrytest.Messages(t, err); !slices.Equal(got, c.want) {
				t.Errorf("causes:\n got  %q\n want %q", got, c.want)
			}
		})
	}

	ok := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "dv12-plcok"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: limited(flowcontrolv1.LimitResponse{Type: "Reject"})}}
	scheme.Scheme.Default(ok)
	if _, err := store.Create(ctx, ok, nil, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, _, err = store.Update(ctx, "dv12-plcok", registrytest.Mutated{Mutate: func(o runtime.Object) {
		pl := o.(*flowcontrolv1.PriorityLevelConfiguration)
		pl.Spec = flowcontrolv1.PriorityLevelConfigurationSpec{Exempt: &flowcontrolv1.ExemptPriorityLevelConfiguration{},
			Limited: limited(flowcontrolv1.LimitResponse{Type: "Queue"})}
		scheme.Scheme.Default(pl)
	}}, nil, nil, false, &metav1.UpdateOptions{})
	want := []string{
		`spec.exempt: Forbidden`,
		`spec.limited: Forbidden`,
		`spec.type: Required value`,
		`spec.limited.limitResponse.queuing: Required value`,
	}
	if got := registrytest.Messages(t, err); !slices.Equal(got, want) {
		t.Errorf("update causes:\n got  %q\n want %q", got, want)
	}
}
