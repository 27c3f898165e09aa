package flowcontrolv1

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// Upstream's default values (pkg/apis/flowcontrol/v1/defaults.go).
const (
	DefaultMatchingPrecedence       int32 = 1000
	DefaultNominalConcurrencyShares int32 = 30
	DefaultHandSize                 int32 = 8
	DefaultQueues                   int32 = 64
	DefaultQueueLengthLimit         int32 = 50
)

// RegisterDefaults registers the covering defaulters of FlowSchema,
// PriorityLevelConfiguration and their lists on s.
func RegisterDefaults(s *runtime.Scheme) error {
	s.AddTypeDefaultingFunc(&flowcontrolv1.FlowSchema{}, func(obj any) { SetObjectDefaults_FlowSchema(obj.(*flowcontrolv1.FlowSchema)) })
	s.AddTypeDefaultingFunc(&flowcontrolv1.FlowSchemaList{}, func(obj any) { SetObjectDefaults_FlowSchemaList(obj.(*flowcontrolv1.FlowSchemaList)) })
	s.AddTypeDefaultingFunc(&flowcontrolv1.PriorityLevelConfiguration{}, func(obj any) {
		SetObjectDefaults_PriorityLevelConfiguration(obj.(*flowcontrolv1.PriorityLevelConfiguration))
	})
	s.AddTypeDefaultingFunc(&flowcontrolv1.PriorityLevelConfigurationList{}, func(obj any) {
		SetObjectDefaults_PriorityLevelConfigurationList(obj.(*flowcontrolv1.PriorityLevelConfigurationList))
	})
	return nil
}

// SetDefaults_FlowSchemaSpec: matchingPrecedence 0 (unset) becomes 1000.
func SetDefaults_FlowSchemaSpec(spec *flowcontrolv1.FlowSchemaSpec) {
	if spec.MatchingPrecedence == 0 {
		spec.MatchingPrecedence = DefaultMatchingPrecedence
	}
}

// SetDefaults_PriorityLevelConfiguration: lendablePercent 0 when unset
// (limited and exempt), an exempt level's nominalConcurrencyShares 0 when
// unset.
func SetDefaults_PriorityLevelConfiguration(in *flowcontrolv1.PriorityLevelConfiguration) {
	if l := in.Spec.Limited; l != nil && l.LendablePercent == nil {
		l.LendablePercent = ptr.To[int32](0)
	}
	if e := in.Spec.Exempt; e != nil {
		if e.NominalConcurrencyShares == nil {
			e.NominalConcurrencyShares = ptr.To[int32](0)
		}
		if e.LendablePercent == nil {
			e.LendablePercent = ptr.To[int32](0)
		}
	}
}

// SetDefaults_LimitedPriorityLevelConfiguration: nominalConcurrencyShares
// 30 when unset (an explicit 0 is kept: v1 allows it).
func SetDefaults_LimitedPriorityLevelConfiguration(in *flowcontrolv1.LimitedPriorityLevelConfiguration) {
	if in.NominalConcurrencyShares == nil {
		in.NominalConcurrencyShares = ptr.To(DefaultNominalConcurrencyShares)
	}
}

// SetDefaults_QueuingConfiguration: handSize 8, queues 64,
// queueLengthLimit 50 when 0.
func SetDefaults_QueuingConfiguration(in *flowcontrolv1.QueuingConfiguration) {
	if in.HandSize == 0 {
		in.HandSize = DefaultHandSize
	}
	if in.Queues == 0 {
		in.Queues = DefaultQueues
	}
	if in.QueueLengthLimit == 0 {
		in.QueueLengthLimit = DefaultQueueLengthLimit
	}
}

// SetObjectDefaults_FlowSchema defaults a FlowSchema.
func SetObjectDefaults_FlowSchema(in *flowcontrolv1.FlowSchema) {
	SetDefaults_FlowSchemaSpec(&in.Spec)
}

// SetObjectDefaults_FlowSchemaList defaults every item.
func SetObjectDefaults_FlowSchemaList(in *flowcontrolv1.FlowSchemaList) {
	for i := range in.Items {
		SetObjectDefaults_FlowSchema(&in.Items[i])
	}
}

// SetObjectDefaults_PriorityLevelConfiguration defaults a priority level
// in upstream's generated order: the object, then its limited part, then
// its queuing.
func SetObjectDefaults_PriorityLevelConfiguration(in *flowcontrolv1.PriorityLevelConfiguration) {
	SetDefaults_PriorityLevelConfiguration(in)
	if l := in.Spec.Limited; l != nil {
		SetDefaults_LimitedPriorityLevelConfiguration(l)
		if q := l.LimitResponse.Queuing; q != nil {
			SetDefaults_QueuingConfiguration(q)
		}
	}
}

// SetObjectDefaults_PriorityLevelConfigurationList defaults every item.
func SetObjectDefaults_PriorityLevelConfigurationList(in *flowcontrolv1.PriorityLevelConfigurationList) {
	for i := range in.Items {
		SetObjectDefaults_PriorityLevelConfiguration(&in.Items[i])
	}
}
