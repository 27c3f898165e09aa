package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the table: its label, how to read a result, and
// whether a higher figure is better.
type row struct {
	label  string
	value  func(*result) (float64, bool)
	format func(float64) string
	higher bool
}

func printTable(out io.Writer, o options, results []*result, withReference bool) {
	ms := func(v float64) string { return fmt.Sprintf("%.0f ms", v) }
	mib := func(v float64) string { return fmt.Sprintf("%.0f MiB", v) }
	perS := func(v float64) string { return fmt.Sprintf("%.0f/s", v) }
	dur := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	rows := []row{
		{"start → /readyz 200 (median)", func(r *result) (float64, bool) { return dur(r.start), true }, ms, false},
		{"idle RSS", func(r *result) (float64, bool) { return float64(r.idleRSS) / (1 << 20), true }, mib, false},
		{fmt.Sprintf("create c=%d (custom resources)", o.conc), func(r *result) (float64, bool) { return r.create, true }, perS, true},
		{fmt.Sprintf("get c=%d", o.conc), func(r *result) (float64, bool) { return r.get, true }, perS, true},
		{fmt.Sprintf("get c=%d, read raw", o.conc), func(r *result) (float64, bool) { return r.getRaw, r.getRaw > 0 }, perS, true},
		{fmt.Sprintf("update c=%d", o.conc), func(r *result) (float64, bool) { return r.update, true }, perS, true},
		{fmt.Sprintf("consistent list of %d", o.objects), func(r *result) (float64, bool) { return r.list, true },
			func(v float64) string { return fmt.Sprintf("%.1f/s", v) }, true},
		{fmt.Sprintf("consistent list of %d, client-go dynamic client", o.objects), func(r *result) (float64, bool) { return r.listDynamic, r.listDynamic > 0 },
			func(v float64) string { return fmt.Sprintf("%.1f/s", v) }, true},
	}
	for i, n := range o.watchers {
		rows = append(rows,
			row{fmt.Sprintf("watch, %d watchers, p99 from send", n), func(r *result) (float64, bool) {
				return dur(r.watch[i].p99), r.watch[i].delivered > 0
			}, ms, false},
			row{fmt.Sprintf("watch, %d watchers, server CPU per delivered event", n), func(r *result) (float64, bool) {
				return float64(r.watch[i].cpuPerEvent) / float64(time.Millisecond), r.watch[i].delivered > 0
			}, func(v float64) string { return fmt.Sprintf("%.3f ms", v) }, false},
			row{fmt.Sprintf("watch, %d watchers, events delivered", n), func(r *result) (float64, bool) {
				return float64(r.watch[i].delivered) / float64(r.watch[i].expected) * 100, true
			}, func(v float64) string { return fmt.Sprintf("%.1f%%", v) }, true},
		)
	}
	rows = append(rows,
		row{"SIGTERM → exit (median)", func(r *result) (float64, bool) { return dur(r.sigterm), true }, ms, false},
		row{fmt.Sprintf("RSS after %d writes", o.writes), func(r *result) (float64, bool) { return float64(r.rssAfterWrites) / (1 << 20), true }, mib, false},
	)

	var ref *result
	if withReference {
		ref = results[len(results)-1]
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	head := []string{""}
	for _, r := range results {
		head = append(head, r.name)
	}
	if ref != nil {
		for _, r := range results[:len(results)-1] {
			head = append(head, r.name+" vs ref")
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, rw := range rows {
		cells := []string{rw.label}
		for _, r := range results {
			v, ok := rw.value(r)
			cells = append(cells, cell(v, ok, rw.format))
		}
		if ref != nil {
			rv, rok := rw.value(ref)
			for _, r := range results[:len(results)-1] {
				v, ok := rw.value(r)
				cells = append(cells, ratio(v, rv, ok && rok, rw.higher))
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	_ = tw.Flush()
	if ref != nil {
		fmt.Fprintln(out, "Ratios: how many times better kapi is than the reference (above 1: kapi ahead).")
	}
}

func cell(v float64, ok bool, format func(float64) string) string {
	if !ok {
		return "n/a"
	}
	return format(v)
}

// ratio is how many times better v is than ref.
func ratio(v, ref float64, ok, higher bool) string {
	if !ok || v == 0 || ref == 0 {
		return "n/a"
	}
	if higher {
		return fmt.Sprintf("%.2f×", v/ref)
	}
	return fmt.Sprintf("%.2f×", ref/v)
}
