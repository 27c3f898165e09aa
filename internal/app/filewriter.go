package app

import (
	"fmt"
	"sync"
)

// fileWriter writes the files NewConfig generates (the PKI, the
// service-account key, the admin kubeconfig) on a goroutine of its own, in
// the order they were handed over, stopping at the first error. Creating a
// file costs 0.1–0.5 ms of kernel time on a busy ext4 volume and a start
// writes thirteen: off the calling goroutine, that time overlaps the rest
// of the start instead of adding to it.
type fileWriter struct {
	writes chan func() error
	done   chan struct{}
	err    error // set by the goroutine, read once done is closed
	close  sync.Once
}

func newFileWriter() *fileWriter {
	w := &fileWriter{writes: make(chan func() error, 16), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for write := range w.writes {
			if w.err == nil {
				w.err = write()
			}
		}
	}()
	return w
}

// add queues write. Not after wait.
func (w *fileWriter) add(write func() error) { w.writes <- write }

// wait returns once every queued write ran (or was skipped after an
// error), with the first error. Nothing can be added afterwards.
func (w *fileWriter) wait() error {
	w.close.Do(func() { close(w.writes) })
	<-w.done
	return w.err
}

// deferFile returns what the generators hand their file writes to: the
// config's writer, wrapping each write's error in what (as the
// generator's caller does), and calling after once the write succeeded.
// A cluster member writes at once: joining servers are sent files of its
// cert dir (and so does a Config not made by NewConfig).
func (c *Config) deferFile(what string, after func()) func(write func() error) {
	if c.cluster != nil || c.files == nil {
		return nil
	}
	return func(write func() error) {
		c.files.add(func() error {
			if err := write(); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			if after != nil {
				after()
			}
			return nil
		})
	}
}
