package watchinit

import (
	"context"
	"testing"
)

func TestInitializedCallsTheSignal(t *testing.T) {
	Initialized(context.Background()) // no signal: nothing happens
	n := 0
	ctx := WithSignal(context.Background(), func() { n++ })
	Initialized(ctx)
	if n != 1 {
		t.Fatalf("signal called %d times, want 1", n)
	}
}
