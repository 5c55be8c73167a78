// Package pool is stdiff's one worker pool: it runs n items of work on a bounded number of goroutines,
// stops handing out work at the first failure or once the caller's context is done, and returns the
// first error. Items are handed out in index order, so callers that merge results in order (package
// canon/values) keep few of them waiting.
//
// It never decides how many goroutines a job deserves beyond the default (GOMAXPROCS): callers pass
// the number.
package pool

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Run calls fn(ctx, i) for every i in [0, n) on at most workers goroutines at once (workers <= 0:
// GOMAXPROCS). The ctx fn gets is cancelled when an fn fails, so that work under way can stop early;
// no index is handed out after a failure or once the caller's ctx is done. Run returns the first error
// an fn returned, else the caller's ctx.Err() (nil when every fn ran and none failed).
func Run(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) error {
	return RunWith(ctx, workers, n, func() struct{} { return struct{}{} },
		func(ctx context.Context, _ struct{}, i int) error { return fn(ctx, i) })
}

// RunWith is Run with state of each goroutine's own (buffers, hashers): each calls newState once,
// before its first item, and passes the result to every fn it runs.
func RunWith[S any](ctx context.Context, workers, n int, newState func() S, fn func(ctx context.Context, s S, i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	inner, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		once  sync.Once
		first error
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newState()
			for inner.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(inner, s, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}
