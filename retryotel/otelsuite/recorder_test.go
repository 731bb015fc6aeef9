package otelsuite_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"github.com/retrykit/retrykit/retryotel"
)

var errFlaky = errors.New("connection refused")

// failing returns an operation that fails its first n attempts (all of
// them when n < 0), then succeeds.
func failing(n int) func(context.Context) error {
	calls := 0
	return func(context.Context) error {
		if calls++; n < 0 || calls <= n {
			return errFlaky
		}
		return nil
	}
}

// newRecorder returns a Recorder for "payments" that records into a fresh
// SDK meter provider, and the reader to collect from it.
func newRecorder(t *testing.T) (*retryotel.Recorder, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	rec, err := retryotel.New("payments", retryotel.WithMeterProvider(mp))
	require.NoError(t, err)
	return rec, reader
}

// collect returns every data point the reader holds, one line each:
// the metric's name, its unit, its attributes, and its value (a counter's
// sum, or a histogram's count, sum, min and max), sorted.
func collect(t *testing.T, reader *sdkmetric.ManualReader) []string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	var lines []string
	line := func(m metricdata.Metrics, set attribute.Set, value string) {
		lines = append(lines, fmt.Sprintf("%s %s %s: %s", m.Name, m.Unit, set.Encoded(attribute.DefaultEncoder()), value))
	}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, "github.com/retrykit/retrykit/retryotel", sm.Scope.Name)
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				require.True(t, d.IsMonotonic, m.Name)
				for _, p := range d.DataPoints {
					line(m, p.Attributes, fmt.Sprint(p.Value))
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					mn, _ := p.Min.Value()
					mx, _ := p.Max.Value()
					line(m, p.Attributes, fmt.Sprintf("count %d sum %d min %d max %d", p.Count, p.Sum, mn, mx))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					mn, _ := p.Min.Value()
					mx, _ := p.Max.Value()
					line(m, p.Attributes, fmt.Sprintf("count %d sum %.6g min %.6g max %.6g", p.Count, p.Sum, mn, mx))
				}
			default:
				t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	slices.Sort(lines)
	return lines
}

const (
	callsOf   = "retry.client.calls {call} retry.dependency=payments,retry.outcome="
	retriesOf = "retry.client.call.retries {retry} retry.dependency=payments,retry.outcome="
	delayOf   = "retry.client.call.retry_delay s retry.dependency=payments,retry.outcome="
	denied    = "retry.client.retry.denied {retry} retry.dependency=payments: "
)

func TestMetrics(t *testing.T) {
	wait := policy.Constant(100 * time.Millisecond)
	tests := []struct {
		name string
		p    policy.Policy
		op   func(context.Context) error
		// drain gives the policy a guard with no token left and its probe
		// used, at the call's start.
		drain bool
		// cancelAfter cancels the call's context this long after it starts.
		cancelAfter time.Duration
		wantErr     error
		want        []string
	}{{
		name: "a first-try success",
		p:    wait.WithMaxAttempts(3),
		op:   failing(0),
		want: []string{
			callsOf + "success: 1",
		},
	}, {
		name: "two retries, then a success",
		p:    wait.WithMaxAttempts(5),
		op:   failing(2),
		want: []string{
			retriesOf + "success: count 1 sum 2 min 2 max 2",
			callsOf + "success: 1",
			delayOf + "success: count 1 sum 0.2 min 0.2 max 0.2",
		},
	}, {
		name:    "exhausted after three attempts",
		p:       wait.WithMaxAttempts(3),
		op:      failing(-1),
		wantErr: retry.ErrExhausted,
		want: []string{
			retriesOf + "exhausted: count 1 sum 2 min 2 max 2",
			callsOf + "exhausted: 1",
			delayOf + "exhausted: count 1 sum 0.2 min 0.2 max 0.2",
		},
	}, {
		// The guard is drained, its probe of the second used: the call
		// waits for its retry, is held back and waits again, twice, until
		// the attempt limit leaves no retry to wait for.
		name:    "held back by the guard until out of attempts",
		p:       wait.WithMaxAttempts(4),
		drain:   true,
		op:      failing(-1),
		wantErr: retry.ErrThrottled,
		want: []string{
			callsOf + "throttled: 1",
			delayOf + "throttled: count 1 sum 0.3 min 0.3 max 0.3",
			denied + "3",
		},
	}, {
		// Held back once, after its first wait, the retry is admitted
		// after the second as the guard's next probe, a second after the
		// last, and succeeds.
		name:  "held back by the guard, then admitted",
		p:     policy.Constant(600 * time.Millisecond).WithMaxAttempts(5),
		drain: true,
		op:    failing(1),
		want: []string{
			retriesOf + "success: count 1 sum 1 min 1 max 1",
			callsOf + "success: 1",
			delayOf + "success: count 1 sum 1.2 min 1.2 max 1.2",
			denied + "1",
		},
	}, {
		name:        "cancelled during its first wait",
		p:           wait.WithMaxAttempts(5),
		op:          failing(-1),
		cancelAfter: 50 * time.Millisecond,
		wantErr:     context.Canceled,
		want: []string{
			callsOf + "cancelled: 1",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec, reader := newRecorder(t)
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tt.cancelAfter > 0 {
					time.AfterFunc(tt.cancelAfter, cancel)
				}
				p := tt.p
				if tt.drain {
					g := policy.NewGuard(2, 0.5)
					for protocol(g).Tokens() >= 1 {
						protocol(g).Record(true, admit.Failed) // retries that failed
					}
					protocol(g).Allow(time.Now()) // the probe of this second
					protocol(g).Start()           // and another call in flight: one alone keeps its retries
					t.Cleanup(protocol(g).Done)
					p = p.WithGuard(g)
				}
				err := retry.Do(ctx, tt.op, p, retry.WithHooks(rec.Hooks()))
				if tt.wantErr == nil {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, tt.wantErr)
					require.ErrorIs(t, err, errFlaky, "the last error is kept")
				}
				require.Equal(t, sorted(tt.want), collect(t, reader))
			})
		})
	}
}

// A call the guard holds back before its first attempt is counted, with
// the outcome shed, and makes no retry.
func TestMetricsOfACallHeldBack(t *testing.T) {
	rec, reader := newRecorder(t)
	g := policy.NewGuard(50, 1)
	for range 16 {
		protocol(g).Run() // attempts running
		t.Cleanup(protocol(g).Leave)
		protocol(g).Record(false, admit.Overloaded) // that timed out
	}
	turn := protocol(g).Enter()
	require.True(t, protocol(g).Probe(turn, time.Now()), "this second's probe, spent")
	protocol(g).Leave()
	err := retry.Do(t.Context(), failing(0), policy.Constant(0).WithMaxAttempts(2).WithGuard(g), retry.WithHooks(rec.Hooks()))
	require.ErrorIs(t, err, retry.ErrShed)
	// The call waited one delay for its turn, at least 10ms: its wait is recorded.
	require.Equal(t, sorted([]string{"retry.client.call.retry_delay s retry.dependency=payments,retry.outcome=shed: count 1 sum 0.01 min 0.01 max 0.01", callsOf + "shed: 1"}), sorted(collect(t, reader)))
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestNewRefusesAnEmptyName(t *testing.T) {
	rec, err := retryotel.New("")
	require.Nil(t, rec)
	require.EqualError(t, err, "retryotel: empty dependency name")
}

func TestZeroRecorderObservesNothing(t *testing.T) {
	var rec retryotel.Recorder
	require.Nil(t, rec.Hooks())
	require.NoError(t, retry.Do(t.Context(), failing(0), policy.Constant(0), retry.WithHooks(rec.Hooks())))
}

func TestMetricsOfAHedgedCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, reader := newRecorder(t)
		var calls atomic.Int32
		op := func(ctx context.Context) error {
			if calls.Add(1) == 1 { // slow: the hedge wins
				select {
				case <-time.After(time.Second):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		}
		p := policy.Constant(0).WithMaxAttempts(3).WithHedging(policy.Hedging{Delay: 10 * time.Millisecond})
		require.NoError(t, retry.Hedge(t.Context(), op, p, retry.WithHooks(rec.Hooks())))
		synctest.Wait() // the loser has returned
		require.Equal(t, sorted([]string{
			callsOf + "success: 1",
			"retry.client.hedge.started {hedge} retry.dependency=payments: 1",
			"retry.client.hedge.won {call} retry.dependency=payments: 1",
		}), collect(t, reader))
	})
}

// A Loop's pause after a run that succeeded is not a retry: only the pause
// after the failed run is recorded, and the span gets no event for the
// others.
func TestLoopPausesAfterSuccessAreNoRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec, reader := newRecorder(t)
		ctx, cancel := context.WithCancel(t.Context())
		runs := 0
		op := func(context.Context) error {
			switch runs++; {
			case runs == 2:
				return errFlaky
			case runs == 4:
				cancel()
			}
			return nil
		}
		err := retry.Loop(ctx, op, policy.Constant(100*time.Millisecond), retry.WithHooks(rec.Hooks()))
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, sorted([]string{
			retriesOf + "cancelled: count 1 sum 3 min 3 max 3",
			callsOf + "cancelled: 1",
			delayOf + "cancelled: count 1 sum 0.3 min 0.3 max 0.3", // every pause of a Loop is a wait
		}), collect(t, reader))
	})
}

// A nil Option and a nil provider are no options: the Recorder records
// through the global provider.
func TestNilOptions(t *testing.T) {
	rec, err := retryotel.New("payments", nil, retryotel.WithMeterProvider(nil))
	require.NoError(t, err)
	require.NotNil(t, rec.Hooks())
	require.NoError(t, retry.Do(t.Context(), failing(1), policy.Constant(0), retry.WithHooks(rec.Hooks())))
}

// protocol returns g with the protocol that retrykit's packages drive.
func protocol(g *policy.Guard) *admit.Guard { return (*admit.Guard)(g) }
