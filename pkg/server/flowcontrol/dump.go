package flowcontrol

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// The debug dumps (upstream's /debug/api_priority_and_fairness/*, same
// columns, comma and tab separated through a tabwriter).

// DumpPriorityLevels writes one row per priority level.
func (c *Controller) DumpPriorityLevels(w io.Writer) {
	c.mu.Lock()
	levels := c.levels
	c.mu.Unlock()
	tw := tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "PriorityLevelName,\tActiveQueues,\tIsIdle,\tIsQuiescing,\tWaitingRequests,\tExecutingRequests,\tDispatchedRequests,\tRejectedRequests,\tTimedoutRequests,\tCancelledRequests")
	for _, name := range sortedLevelNames(levels) {
		lv := levels[name]
		lv.mu.Lock()
		active := 0
		for _, q := range lv.queues {
			if len(q.reqs) > 0 || q.executing > 0 {
				active++
			}
		}
		idle := lv.executing == 0 && lv.waiting == 0
		fmt.Fprintf(tw, "%s,\t%d,\t%v,\t%v,\t%d,\t%d,\t%d,\t%d,\t%d,\t%d\n", name, active, idle, false, lv.waiting, lv.executing,
			lv.dispatched, lv.rejected, lv.timedOut, lv.cancelled)
		lv.mu.Unlock()
	}
	_ = tw.Flush()
}

// DumpQueues writes one row per queue of every queuing level.
func (c *Controller) DumpQueues(w io.Writer) {
	c.mu.Lock()
	levels := c.levels
	c.mu.Unlock()
	tw := tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)
	fmt.Fprintln(tw, "PriorityLevelName,\tIndex,\tPendingRequests,\tExecutingRequests,\tSeatsInUse,\tNextDispatchR,\tInitialSeatsSum,\tMaxSeatsSum,\tTotalWorkSum")
	for _, name := range sortedLevelNames(levels) {
		lv := levels[name]
		lv.mu.Lock()
		if lv.exempt || lv.reject {
			fmt.Fprintf(tw, "%s,\t<none>,\t<none>,\t<none>,\t<none>,\t<none>,\t<none>,\t<none>,\t<none>\n", name)
			lv.mu.Unlock()
			continue
		}
		for _, q := range lv.queues {
			var initial, maxSeats int
			for _, r := range q.reqs {
				initial += r.width.Seats
				maxSeats += max(r.width.Seats, r.width.FinalSeats)
			}
			fmt.Fprintf(tw, "%s,\t%d,\t%d,\t%d,\t%d,\t%.8fss,\t%d,\t%d,\t%.8fss\n", name, q.index, len(q.reqs), q.executing, q.seatsInUse,
				q.virtualStart, initial, maxSeats, float64(initial))
		}
		lv.mu.Unlock()
	}
	_ = tw.Flush()
}

// DumpRequests writes one row per waiting request; with details, who and
// what it is.
func (c *Controller) DumpRequests(w io.Writer, details bool) {
	c.mu.Lock()
	levels := c.levels
	c.mu.Unlock()
	tw := tabwriter.NewWriter(w, 8, 0, 1, ' ', 0)
	header := "PriorityLevelName,\tFlowSchemaName,\tQueueIndex,\tRequestIndexInQueue,\tFlowDistingsher,\tArriveTime,\tInitialSeats,\tFinalSeats,\tAdditionalLatency,\tStartTime"
	if details {
		header += ",\tUserName,\tVerb,\tAPIPath,\tNamespace,\tName,\tAPIVersion,\tResource,\tSubResource"
	}
	fmt.Fprintln(tw, header)
	for _, name := range sortedLevelNames(levels) {
		lv := levels[name]
		lv.mu.Lock()
		for _, q := range lv.queues {
			for i, r := range q.reqs {
				fmt.Fprintf(tw, "%s,\t%s,\t%d,\t%d,\t%s,\t%s,\t%d,\t%d,\t%s,\t%s", name, r.cls.FlowSchema, q.index, i, r.cls.Distinguisher,
					r.arrive.UTC().Format(time.RFC3339Nano), r.width.Seats, r.width.FinalSeats, r.width.AdditionalLatency, "<none>")
				if details {
					d := r.desc
					fmt.Fprintf(tw, ",\t%s,\t%s,\t%s,\t%s,\t%s,\t%s,\t%s,\t%s", d.User, d.Verb, d.Path, d.Namespace, d.Name, d.APIVersion, d.Resource, d.Subresource)
				}
				fmt.Fprintln(tw)
			}
		}
		lv.mu.Unlock()
	}
	_ = tw.Flush()
}
