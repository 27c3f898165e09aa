// Package parallel runs independent pieces of work a few at a time.
package parallel

import "sync"

// Run runs every function of work on at most n goroutines and returns
// their errors, in the order of work (nil where one succeeded).
func Run(n int, work []func() error) []error {
	errs := make([]error, len(work))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(max(n, 1), len(work)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = work[i]()
			}
		})
	}
	for i := range work {
		next <- i
	}
	close(next)
	wg.Wait()
	return errs
}
