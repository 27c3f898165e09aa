package flowcontrol

import (
	"math"
	"sort"
)

// The seat borrowing adjustment (upstream apf_controller.go
// updateBorrowingLocked): each period, every limited level's seat demand
// (executing plus waiting seats) is summarised by its high watermark and
// its time-weighted average plus one standard deviation (the envelope),
// smoothed as upstream (smoothed = max(envelope, 0.977*previous +
// 0.023*envelope)); its lower bound is max(nominal-lendable, min(nominal,
// high watermark)) and its target max(lower bound, smoothed demand). The levels' current limits are
// then the unique allocation, summing to the seats not taken by exempt
// levels, in which each level gets fairProp*target clamped to
// [nominal-lendable, nominal+borrowing limit] (upstream's
// computeConcurrencyAllocation).

const demandDecay = 0.977

// rebalanceLocked runs one adjustment (c.mu held).
func (c *Controller) rebalanceLocked() {
	now := c.now()
	type class struct {
		lv                   *level
		lower, upper, target float64
	}
	var classes []class
	required := float64(c.serverCL)
	for _, lv := range c.levels {
		lv.mu.Lock()
		if lv.exempt {
			required -= float64(lv.nominalCL)
			lv.mu.Unlock()
			continue
		}
		lv.noteDemandLocked(now)
		// Upstream's seatDemandStats.update: the high watermark always,
		// the smoothed envelope (average plus standard deviation) only
		// for a period of positive length.
		highWatermark := float64(lv.demandMax)
		if lv.demandT > 0 {
			avg := lv.demandSum / lv.demandT
			variance := math.Max(0, lv.demandSq/lv.demandT-avg*avg)
			env := avg + math.Sqrt(variance)
			lv.smoothedDemand = math.Max(env, demandDecay*lv.smoothedDemand+(1-demandDecay)*env)
		}
		lv.demandSum, lv.demandSq, lv.demandT, lv.demandMax = 0, 0, 0, 0
		// The lower bound is the lesser of the period's high watermark
		// and the nominal limit, but never under the configured minimum
		// (nominal - lendable): upstream's minCurrentCL (KEP-1040).
		minCL := float64(lv.nominalCL - lv.lendableCL)
		lower := math.Max(minCL, math.Min(float64(lv.nominalCL), highWatermark))
		classes = append(classes, class{lv: lv, lower: lower, upper: float64(lv.borrowingCL), target: math.Max(lower, lv.smoothedDemand)})
		lv.mu.Unlock()
	}
	if len(classes) == 0 {
		return
	}
	lowers := make([]float64, len(classes))
	uppers := make([]float64, len(classes))
	targets := make([]float64, len(classes))
	for i, cl := range classes {
		lowers[i], uppers[i], targets[i] = cl.lower, cl.upper, cl.target
	}
	allocs := fairAllocation(required, lowers, uppers, targets)
	for i, cl := range classes {
		cl.lv.mu.Lock()
		cl.lv.currentCL = int(math.Round(allocs[i]))
		cl.lv.dispatchLocked()
		cl.lv.mu.Unlock()
	}
}

// fairAllocation returns allocs with alloc[i] = clamp(p*target[i], lower[i],
// upper[i]) for the p that makes them sum to required; when no p can
// (required outside [sum lower, sum upper]) every alloc is at the bound
// nearest required.
func fairAllocation(required float64, lower, upper, target []float64) []float64 {
	n := len(lower)
	out := make([]float64, n)
	var sumLower, sumUpper float64
	for i := range n {
		sumLower += lower[i]
		sumUpper += upper[i]
	}
	switch {
	case required <= sumLower:
		copy(out, lower)
		return out
	case required >= sumUpper:
		copy(out, upper)
		return out
	}
	sum := func(p float64) float64 {
		var s float64
		for i := range n {
			s += clamp(p*target[i], lower[i], upper[i])
		}
		return s
	}
	// sum is nondecreasing in p: bisect between 0 and a p that puts every
	// class at its upper bound.
	hi := 1.0
	for sum(hi) < required && hi < 1e12 {
		hi *= 2
	}
	lo := 0.0
	for range 100 {
		mid := (lo + hi) / 2
		if sum(mid) < required {
			lo = mid
		} else {
			hi = mid
		}
	}
	for i := range n {
		out[i] = clamp(hi*target[i], lower[i], upper[i])
	}
	return out
}

func clamp(x, lo, hi float64) float64 {
	return math.Min(math.Max(x, lo), hi)
}

// sortedLevelNames lists level names in order (dumps).
func sortedLevelNames(levels map[string]*level) []string {
	names := make([]string, 0, len(levels))
	for n := range levels {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
