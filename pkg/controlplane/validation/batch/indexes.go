package batch

import (
	"fmt"
	"strconv"
	"strings"
)

// validateIndexesFormat checks a list of index intervals ("1,3-5,7"):
// each below completions, in increasing order. It returns how many
// indexes the list holds.
func validateIndexesFormat(indexes string, completions int32) (int32, error) {
	if indexes == "" {
		return 0, nil
	}
	var last *int32
	var total int32
	for interval := range strings.SplitSeq(indexes, ",") {
		x, y, err := parseIndexInterval(interval, completions)
		if err != nil {
			return 0, err
		}
		if last != nil && *last >= x {
			return 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", *last, x)
		}
		total += y - x + 1
		last = &y
	}
	return total, nil
}

// parseIndexInterval parses "x" or "x-y" (x < y), both below completions.
func parseIndexInterval(interval string, completions int32) (int32, int32, error) {
	limits := strings.Split(interval, "-")
	if len(limits) > 2 {
		return 0, 0, fmt.Errorf("the fragment %q violates the requirement that an index interval can have at most two parts separated by '-'", interval)
	}
	x, err := strconv.Atoi(limits[0])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[0])
	}
	if x >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[0])
	}
	if len(limits) == 1 {
		return int32(x), int32(x), nil
	}
	y, err := strconv.Atoi(limits[1])
	if err != nil {
		return 0, 0, fmt.Errorf("cannot convert string to integer for index: %q", limits[1])
	}
	if y >= int(completions) {
		return 0, 0, fmt.Errorf("too large index: %q", limits[1])
	}
	if x >= y {
		return 0, 0, fmt.Errorf("non-increasing order, previous: %d, current: %d", x, y)
	}
	return int32(x), int32(y), nil
}

// validateFailedIndexesNotOverlapCompleted reports the first index both
// lists hold. Intervals that do not parse are skipped (their format is
// reported elsewhere).
func validateFailedIndexesNotOverlapCompleted(completed, failed string, completions int32) error {
	if completed == "" || failed == "" {
		return nil
	}
	cs, fs := strings.Split(completed, ","), strings.Split(failed, ",")
	ci, fi := 0, 0
	cx, cy, cErr := parseIndexInterval(cs[ci], completions)
	fx, fy, fErr := parseIndexInterval(fs[fi], completions)
	for ci < len(cs) && fi < len(fs) {
		switch {
		case cErr != nil:
			ci++
			if ci < len(cs) {
				cx, cy, cErr = parseIndexInterval(cs[ci], completions)
			}
		case fErr != nil:
			fi++
			if fi < len(fs) {
				fx, fy, fErr = parseIndexInterval(fs[fi], completions)
			}
		case cx <= fy && fx <= cy:
			return fmt.Errorf("failedIndexes and completedIndexes overlap at index: %d", max(cx, fx))
		case cx <= fx:
			ci++
			if ci < len(cs) {
				cx, cy, cErr = parseIndexInterval(cs[ci], completions)
			}
		default:
			fi++
			if fi < len(fs) {
				fx, fy, fErr = parseIndexInterval(fs[fi], completions)
			}
		}
	}
	return nil
}
