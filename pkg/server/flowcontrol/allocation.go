package flowcontrol

import (
	"math"
	"sort"
)

// The seat borrowing adjustment (upstream apf_controller.go
// updateBorrowingLocked), run every AdjustmentPeriod and whenever the
// configuration changes. Each level's seat demand (executing plus waiting
// seats) over the period is summarised by its high watermark, its
// time-weighted average and standard deviation, and a smoothed envelope
// (smoothed = max(avg+stdev, 0.977*previous + 0.023*(avg+stdev))). An
// exempt level's current limit is max(lower limit, high watermark), taken
// from the seats to share; a limited level's lower bound is max(lower
// limit, min(nominal, high watermark)), its target max(lower bound,
// smoothed), and its current limit fairFrac*target clamped to [lower
// bound, upper limit], the fairFrac making them sum to the nominal limits'
// sum (upstream's computeConcurrencyAllocation). When the seats left after
// the exempt levels do not cover the lower bounds, the limited levels get
// their lower limits or a share of the way to their lower bounds, and the
// fair fraction is 0, as upstream.

const demandDecay = 0.977

// minTarget is the smallest target the allocation divides by (upstream's
// MinTarget).
const minTarget = 0.001

// demandStats are a level's seat demand statistics of the last period.
type demandStats struct {
	avg, stdDev   float64
	highWatermark int
	smoothed      float64
}

// update folds in one period: its integrals of demand (sum, sum of
// squares, duration) and its maximum.
func (st *demandStats) update(sum, sq, dur float64, maxDemand int) {
	st.highWatermark = maxDemand
	if dur <= 0 {
		return
	}
	avg := sum / dur
	dev := 0.0
	if v := sq/dur - avg*avg; v >= 0 {
		dev = math.Sqrt(v)
	}
	st.avg, st.stdDev = avg, dev
	env := avg + dev
	st.smoothed = math.Max(env, demandDecay*st.smoothed+(1-demandDecay)*env)
}

// rebalanceLocked runs one adjustment (c.mu held).
func (c *Controller) rebalanceLocked() {
	now := c.now()
	type class struct {
		lv                          *level
		minCL, nominalCL, currentCL int
		stats                       demandStats
		exempt                      bool
		item                        int // index in lowers/uppers/targets
	}
	names := make([]string, 0, len(c.levels))
	for n := range c.levels {
		names = append(names, n)
	}
	classes := make([]class, 0, len(names))
	var lowers, uppers, targets []float64
	var nominalSum, minCLSum, minCurrentSum int
	for _, n := range names {
		nominalSum += c.levels[n].nominalLimit()
	}
	remaining := nominalSum
	for _, n := range names {
		lv := c.levels[n]
		lv.mu.Lock()
		lv.noteDemandLocked(now)
		lv.stats.update(lv.demandSum, lv.demandSq, lv.demandT, lv.demandMax)
		lv.demandSum, lv.demandSq, lv.demandT = 0, 0, 0
		lv.demandMax = lv.seatsInUse + lv.waitingSeats
		cl := class{lv: lv, minCL: lv.nominalCL - lv.lendableCL, nominalCL: lv.nominalCL, stats: lv.stats, exempt: lv.exempt}
		if cl.exempt {
			cl.currentCL = max(cl.minCL, cl.stats.highWatermark)
			remaining -= cl.currentCL
		} else {
			lower := max(cl.minCL, min(cl.nominalCL, cl.stats.highWatermark))
			cl.item = len(lowers)
			lowers = append(lowers, float64(lower))
			uppers = append(uppers, float64(lv.borrowingCL))
			targets = append(targets, math.Max(float64(lower), cl.stats.smoothed))
			minCLSum += cl.minCL
			minCurrentSum += lower
		}
		lv.mu.Unlock()
		classes = append(classes, cl)
	}
	if len(lowers) == 0 {
		return
	}
	var allocs []float64
	var fairFrac, shareFrac float64
	switch {
	case remaining <= minCLSum:
	case remaining <= minCurrentSum:
		shareFrac = float64(remaining-minCLSum) / float64(minCurrentSum-minCLSum)
	default:
		allocs, fairFrac = fairAllocation(float64(nominalSum), lowers, uppers, targets)
	}
	c.metrics.setFairFrac(fairFrac)
	for _, cl := range classes {
		// Upstream publishes, as an exempt level's target, the first
		// limited level's (its index lookup misses and yields 0).
		target := targets[0]
		switch {
		case cl.exempt:
		case remaining <= minCLSum:
			cl.currentCL = cl.minCL
			target = targets[cl.item]
		case remaining <= minCurrentSum:
			lower := int(lowers[cl.item])
			cl.currentCL = cl.minCL + int(math.Round(float64(lower-cl.minCL)*shareFrac))
			target = targets[cl.item]
		default:
			cl.currentCL = int(math.Round(allocs[cl.item]))
			target = targets[cl.item]
		}
		cl.lv.mu.Lock()
		cl.lv.currentCL = cl.currentCL
		cl.lv.setDenominatorsLocked(c.serverCL)
		cl.lv.dispatchLocked()
		cl.lv.publishLocked()
		cl.lv.mu.Unlock()
		c.metrics.adjusted(cl.lv.name, cl.stats, target, cl.currentCL)
	}
}

// nominalLimit is the level's nominal limit, under its lock.
func (lv *level) nominalLimit() int {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	return lv.nominalCL
}

// fairAllocation returns allocs with alloc[i] = clamp(p*target[i], lower[i],
// upper[i]) for the p that makes them sum to required, and p (upstream's
// fair fraction); targets under minTarget count as minTarget. When no p
// can (required outside [sum lower, sum upper]) every alloc is at the
// bound nearest required and p is the smallest lower (largest upper)
// bound relative to its target.
func fairAllocation(required float64, lower, upper, target []float64) ([]float64, float64) {
	n := len(lower)
	out := make([]float64, n)
	tgt := make([]float64, n)
	var sumLower, sumUpper, sumTarget float64
	minRelLower, maxRelLower := math.MaxFloat32, 0.0
	minRelUpper, maxRelUpper := math.MaxFloat32, 0.0
	for i := range n {
		tgt[i] = math.Max(target[i], minTarget)
		sumLower += lower[i]
		sumUpper += upper[i]
		sumTarget += tgt[i]
		rl, ru := lower[i]/tgt[i], upper[i]/tgt[i]
		minRelLower, maxRelLower = math.Min(minRelLower, rl), math.Max(maxRelLower, rl)
		minRelUpper, maxRelUpper = math.Min(minRelUpper, ru), math.Max(maxRelUpper, ru)
	}
	const epsilon = 0.0000001
	switch {
	case required == 0:
		return out, 0
	case sumLower-required > -epsilon:
		copy(out, lower)
		return out, minRelLower
	case required-sumUpper > -epsilon:
		copy(out, upper)
		return out, maxRelUpper
	}
	if p := required / sumTarget; maxRelLower <= p && p <= minRelUpper {
		// No bound matters.
		for i := range n {
			out[i] = tgt[i] * p
		}
		return out, p
	}
	// Bounds matter: sweep p upward from the smallest relative lower
	// bound through the relative bounds in ascending order. Between two
	// of them the sum grows linearly, with slope the targets of the
	// classes whose lower bound is passed and upper bound not yet; stop
	// in the segment where it reaches required. (Upstream's order of
	// operations, so that p is the same float.)
	type edge struct {
		at     float64
		target float64 // added to the slope at the edge (negative: upper)
	}
	edges := make([]edge, 0, 2*n)
	for i := range n {
		edges = append(edges, edge{lower[i] / tgt[i], tgt[i]}, edge{upper[i] / tgt[i], -tgt[i]})
	}
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].at < edges[j].at })
	sumSoFar, p := sumLower, minRelLower
	var slope float64
	var sensitive int // classes between their bounds at p
	next := 0
	for sumSoFar < required && next < len(edges) {
		// Take every edge at or below p into the slope, then the next
		// one above it bounds this segment.
		for next < len(edges) && edges[next].at <= p {
			slope += edges[next].target
			if edges[next].target > 0 {
				sensitive++
			} else {
				sensitive--
			}
			next++
		}
		if next >= len(edges) {
			break
		}
		bound := edges[next].at
		if sensitive == 0 {
			p = bound
			continue
		}
		if np := p + (required-sumSoFar)/slope; np <= bound {
			p = np
			break
		}
		sumSoFar += (bound - p) * slope
		p = bound
	}
	for i := range n {
		out[i] = clamp(p*tgt[i], lower[i], upper[i])
	}
	return out, p
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
