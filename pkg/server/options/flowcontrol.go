package options

import "github.com/spf13/pflag"

// FlowControlOptions configure API Priority and Fairness.
type FlowControlOptions struct {
	// EnablePriorityAndFairness is --enable-priority-and-fairness: when
	// true (the default, as upstream) the max-in-flight limits become the
	// total seats APF shares among the priority levels instead of two
	// independent limits.
	EnablePriorityAndFairness bool
}

// NewFlowControlOptions returns kube-apiserver's defaults.
func NewFlowControlOptions() *FlowControlOptions {
	return &FlowControlOptions{EnablePriorityAndFairness: true}
}

// AddFlags adds --enable-priority-and-fairness to fs.
func (o *FlowControlOptions) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.EnablePriorityAndFairness, "enable-priority-and-fairness", o.EnablePriorityAndFairness, "If true, replace the max-in-flight handler with an enhanced one that queues and dispatches with priority and fairness")
}

// Validate checks the flags (nothing can be wrong with a bool).
func (o *FlowControlOptions) Validate() []error { return nil }
