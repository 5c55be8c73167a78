package pool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRun: every index runs once, on at most the workers asked for, each worker with its own state.
func TestRun(t *testing.T) {
	const n = 1000
	var ran [n]atomic.Int32
	var busy, most atomic.Int32
	var states atomic.Int32
	err := RunWith(t.Context(), 3, n, func() *int { states.Add(1); return new(int) }, func(ctx context.Context, s *int, i int) error {
		b := busy.Add(1)
		for m := most.Load(); b > m && !most.CompareAndSwap(m, b); m = most.Load() {
		}
		*s++ // a worker's own state: no race
		ran[i].Add(1)
		busy.Add(-1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ran {
		if ran[i].Load() != 1 {
			t.Fatalf("index %d ran %d times", i, ran[i].Load())
		}
	}
	if most.Load() > 3 || states.Load() > 3 {
		t.Errorf("%d at once, %d states; at most 3 asked for", most.Load(), states.Load())
	}
	if err := Run(t.Context(), 0, 0, func(context.Context, int) error { t.Error("ran with n = 0"); return nil }); err != nil {
		t.Error(err)
	}
}

// TestRunStops: the first failure is returned, stops the handing out, and cancels the work under way;
// a done context hands out nothing and is the error.
func TestRunStops(t *testing.T) {
	boom := errors.New("boom")
	var ran atomic.Int32
	var cancelled sync.WaitGroup
	cancelled.Add(1)
	err := Run(t.Context(), 2, 1000, func(ctx context.Context, i int) error {
		ran.Add(1)
		switch i {
		case 0:
			<-ctx.Done() // work under way hears of the failure
			cancelled.Done()
			return ctx.Err()
		case 1:
			return boom
		}
		return nil
	})
	cancelled.Wait()
	if !errors.Is(err, boom) || ran.Load() > 3 {
		t.Errorf("error %v after %d items", err, ran.Load())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran.Store(0)
	if err := Run(ctx, 2, 10, func(context.Context, int) error { ran.Add(1); return nil }); !errors.Is(err, context.Canceled) || ran.Load() != 0 {
		t.Errorf("done context: %v after %d items", err, ran.Load())
	}
}
