package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/retrykit/retrykit/backoff"
	"github.com/retrykit/retrykit/retry"

	"github.com/retrykit/retrykit/policy"
)

func ExampleDefault() {
	p := policy.Default()
	fmt.Println(p)
	for n := 1; n <= 7; n++ {
		fmt.Print(p.Delay(n), " ")
	}
	fmt.Println()
	// Output:
	// exponential 10s x2 cap 5m0s
	// 10s 20s 40s 1m20s 2m40s 5m0s 5m0s
}

func ExamplePolicy_Validate() {
	p := policy.Exponential(10 * time.Second).WithCap(time.Second)
	fmt.Println(p.Validate())
	// Output: policy: invalid cap: 1s is below the base delay 10s
}

func ExamplePolicy_WithMaxAttempts() {
	// Attempts count the first call: this policy calls at most three times.
	p := policy.Exponential(100 * time.Millisecond).WithFactor(1.6).WithCap(2 * time.Second).WithMaxAttempts(3)
	fmt.Println(p)
	// Output: exponential 100ms x1.6 cap 2s attempts 3
}

func ExampleParse() {
	p, err := policy.Parse("exponential 100ms x2 cap 5s attempts 5 jitter full")
	fmt.Println(p, err)
	fmt.Println(p.Cap(), p.MaxAttempts(), p.Jitter().Kind == backoff.Full)

	_, err = policy.Parse("exponential 100ms cap soon")
	fmt.Println(err)
	// Output:
	// exponential 100ms x2 cap 5s attempts 5 jitter full <nil>
	// 5s 5 true
	// policy: parse "exponential 100ms cap soon": bad word "soon", expected a duration such as 5s after "cap"
}

func ExamplePolicy_UnmarshalJSON() {
	// A policy in a JSON configuration file: its text form as a string, or
	// an object spelling the same settings.
	var cfg struct {
		Inventory policy.Policy `json:"inventory"`
		Payments  policy.Policy `json:"payments"`
	}
	err := json.Unmarshal([]byte(`{
		"inventory": "constant 1s attempts 3",
		"payments": {"schedule": "exponential", "base": "100ms", "cap": "5s", "attempts": 5}
	}`), &cfg)
	fmt.Println(cfg.Inventory, "|", cfg.Payments, "|", err)

	out, _ := json.Marshal(cfg)
	fmt.Println(string(out))
	// Output:
	// constant 1s attempts 3 | exponential 100ms x2 cap 5s attempts 5 | <nil>
	// {"inventory":"constant 1s attempts 3","payments":"exponential 100ms x2 cap 5s attempts 5"}
}

func ExamplePolicy_MarshalText() {
	// A Policy is a text value: flag.TextVar makes -retry take its text
	// form, with the default shown in the usage.
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	p := policy.Default()
	fs.TextVar(&p, "retry", p, "retry policy")
	err := fs.Parse([]string{"-retry", "exponential 1s x1.6 cap 2m jitter symmetric 0.2"})
	fmt.Println(p, err)
	// Output:
	// exponential 1s x1.6 cap 2m0s jitter symmetric 0.2 <nil>
}

func ExamplePolicy_WithRandom() {
	// Full jitter drawn from a seeded source: the same seed gives the same
	// schedule, so a test can reproduce it.
	schedule := func(seed uint64) []time.Duration {
		p := policy.Exponential(time.Second).WithCap(time.Minute).
			WithJitter(backoff.Jitter{Kind: backoff.Full}).
			WithRandom(rand.NewPCG(seed, seed))
		var ds []time.Duration
		var prev time.Duration
		for n := 1; n <= 6; n++ {
			prev = p.Backoff(n, prev)
			ds = append(ds, prev.Round(time.Millisecond))
		}
		return ds
	}
	fmt.Println(schedule(1))
	fmt.Println(schedule(1))
	fmt.Println(schedule(2))
	// Output:
	// [997ms 205ms 3.455s 7.304s 4.566s 29.89s]
	// [997ms 205ms 3.455s 7.304s 4.566s 29.89s]
	// [190ms 1.984s 2.464s 3.504s 1.881s 27.697s]
}

func ExamplePolicy_WithResetRule() {
	// The kubelet's crash-loop rule for retry.Loop: the back-off starts over
	// after a run that lasted ten minutes, whether it failed or not.
	p := policy.Default().WithResetRule(policy.ResetRule{AfterStableRun: 10 * time.Minute})
	fmt.Println(p)
	// Output:
	// exponential 10s x2 cap 5m0s reset stable 10m0s
}

func ExampleNewGuard() {
	// One guard per dependency, shared by every policy that calls it.
	inventory := policy.NewGuard(4, 1)
	p := policy.Constant(0).WithMaxAttempts(3).WithGuard(inventory)

	// Another goroutine's call is in flight meanwhile: a call alone in
	// flight would keep its retries whatever the tokens.
	started, release, other := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(other)
		_ = retry.Do(context.Background(), func(context.Context) error {
			close(started)
			<-release
			return nil
		}, p)
	}()
	<-started

	call := func(fail bool) {
		attempts := 0
		err := retry.Do(context.Background(), func(ctx context.Context) error {
			attempts++
			if fail {
				return errors.New("503 service unavailable")
			}
			return nil
		}, p)
		fmt.Printf("attempts %d, throttled %v\n", attempts, errors.Is(err, retry.ErrThrottled))
	}
	// The dependency is down: a first try that fails takes half the ratio
	// (4 tokens, then 3.5), a retry that fails a whole token (1.5 after the
	// first call), until none is left. Then one retry a second goes through
	// as a probe, and the others are held back.
	call(true)
	call(true)
	call(true)
	// It is back: each success adds the ratio, and a failed attempt may be
	// retried again once a whole token is there.
	call(false)
	call(false)
	call(true)
	// The other call ends, with a success. Alone in flight, a call keeps
	// its retries: one call at a time cannot make a storm.
	close(release)
	<-other
	call(true)
	// Output:
	// attempts 3, throttled false
	// attempts 3, throttled false
	// attempts 1, throttled true
	// attempts 1, throttled false
	// attempts 1, throttled false
	// attempts 2, throttled true
	// attempts 3, throttled false
}
