package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/kapi-dev/kapi/pkg/server/healthz"
)

// PostStartHookFunc runs once the server is serving. ctx is cancelled when
// the HTTP server is told to stop (lifecycle.md 9). Returning an error is
// fatal for the process.
type PostStartHookFunc func(ctx context.Context) error

// PreShutdownHookFunc runs once the stop signal arrives, before the server
// stops accepting requests.
type PreShutdownHookFunc func() error

type postStartHookEntry struct {
	hook PostStartHookFunc
	// done is closed when the hook returned nil; shared with the health
	// check poststarthook/<name> of every server that copied the entry.
	done chan struct{}
}

type preShutdownHookEntry struct {
	hook PreShutdownHookFunc
}

// AddPostStartHook registers a hook run by the head of the chain after it
// starts serving; it owns the boot-sequence check poststarthook/<name>.
// A duplicate name or a registration after the hooks started is an error.
func (s *GenericServer) AddPostStartHook(name string, hook PostStartHookFunc) error {
	if name == "" {
		return errors.New("missing name")
	}
	if hook == nil {
		return fmt.Errorf("hook func may not be nil: %q", name)
	}
	s.hookLock.Lock()
	defer s.hookLock.Unlock()
	if s.postStartHooksCalled {
		return fmt.Errorf("unable to add %q because PostStartHooks have already been called", name)
	}
	if _, exists := s.postStartHooks[name]; exists {
		return fmt.Errorf("unable to add %q because it was already registered", name)
	}
	done := make(chan struct{})
	if err := s.AddBootSequenceHealthChecks(postStartHookCheck(name, done)); err != nil {
		return err
	}
	s.postStartHooks[name] = postStartHookEntry{hook: hook, done: done}
	return nil
}

// AddPreShutdownHook registers a hook run when the stop signal arrives.
// An empty name is an error, a nil hook is ignored, duplicates and
// registrations after the hooks started are errors (lifecycle.md 33).
func (s *GenericServer) AddPreShutdownHook(name string, hook PreShutdownHookFunc) error {
	if name == "" {
		return errors.New("missing name")
	}
	if hook == nil {
		return nil
	}
	s.hookLock.Lock()
	defer s.hookLock.Unlock()
	if s.preShutdownHooksCalled {
		return fmt.Errorf("unable to add %q because PreShutdownHooks have already been called", name)
	}
	if _, exists := s.preShutdownHooks[name]; exists {
		return fmt.Errorf("unable to add %q because it is already registered", name)
	}
	s.preShutdownHooks[name] = preShutdownHookEntry{hook: hook}
	return nil
}

func postStartHookCheck(name string, done <-chan struct{}) healthz.HealthChecker {
	return healthz.NamedCheck("poststarthook/"+name, func(*http.Request) error {
		select {
		case <-done:
			return nil
		default:
			return errors.New("not finished")
		}
	})
}

// runPostStartHooks starts every hook in its own goroutine of r
// (lifecycle.md 7f).
func (s *GenericServer) runPostStartHooks(ctx context.Context, r *runGroup) {
	s.hookLock.Lock()
	defer s.hookLock.Unlock()
	s.postStartHooksCalled = true
	if s.destroying {
		// Destroyed before it ran: hooks would work on destroyed state.
		return
	}
	// The hooks' context ends with ctx or when the server is destroyed.
	ctx, s.cancelHooks = context.WithCancel(ctx)
	names := make([]string, 0, len(s.postStartHooks))
	for name := range s.postStartHooks {
		names = append(names, name)
	}
	sort.Strings(names)
	done := make([]<-chan struct{}, 0, len(names))
	for _, name := range names {
		entry := s.postStartHooks[name]
		done = append(done, entry.done)
		s.hooksRunning.Add(1)
		r.goTracked(func() {
			defer s.hooksRunning.Done()
			s.runPostStartHook(ctx, name, entry)
		})
	}
	r.goTracked(func() {
		for _, ch := range done {
			select {
			case <-ch:
			case <-ctx.Done():
				return
			case <-r.aborted:
				return
			}
		}
		close(s.postStartHooksDone)
	})
}

// PostStartHooksFinished is closed once every post-start hook the server
// ran (the head runs those of the whole chain) has returned nil. It is
// never closed if a hook fails, if the server stops first, or on a server
// that is not the head of a running chain. Waiters use it instead of
// polling the poststarthook/<name> checks; /readyz may still wait for
// its other checks.
func (s *GenericServer) PostStartHooksFinished() <-chan struct{} {
	return s.postStartHooksDone
}

func (s *GenericServer) runPostStartHook(ctx context.Context, name string, entry postStartHookEntry) {
	// A panicking hook crashes the process, as upstream: no recover here.
	if err := entry.hook(ctx); err != nil {
		s.cfg.OnPostStartHookError(name, fmt.Errorf("PostStartHook %q failed: %w", name, err))
		return
	}
	close(entry.done)
}

// runPreShutdownHooks runs every hook one after another and joins their
// errors (lifecycle.md 33–34).
func (s *GenericServer) runPreShutdownHooks() error {
	s.hookLock.Lock()
	s.preShutdownHooksCalled = true
	names := make([]string, 0, len(s.preShutdownHooks))
	for name := range s.preShutdownHooks {
		names = append(names, name)
	}
	hooks := s.preShutdownHooks
	s.hookLock.Unlock()
	sort.Strings(names)
	var errs []error
	for _, name := range names {
		if err := hooks[name].hook(); err != nil {
			errs = append(errs, fmt.Errorf("PreShutdownHook %q failed: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
