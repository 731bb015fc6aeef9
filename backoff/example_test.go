package backoff_test

import (
	"fmt"
	"time"

	"github.com/retrykit/retrykit/backoff"
)

func ExampleDefault() {
	s := backoff.Default()
	for range 7 {
		fmt.Print(s.Next(), " ")
	}
	s.Reset()
	fmt.Println("| after Reset:", s.Next())
	// Output: 10s 20s 40s 1m20s 2m40s 5m0s 5m0s | after Reset: 10s
}

func ExampleExponential() {
	grpc := backoff.Cap(backoff.Exponential(time.Second, 1.6), 120*time.Second)
	for n := 1; n <= 12; n++ {
		fmt.Print(grpc.Delay(n).Round(time.Millisecond), " ")
	}
	fmt.Println()
	// Output: 1s 1.6s 2.56s 4.096s 6.554s 10.486s 16.777s 26.844s 42.95s 1m8.719s 1m49.951s 2m0s
}

func ExampleScheduleFunc() {
	// A custom schedule: the Fibonacci numbers in seconds.
	fib := backoff.ScheduleFunc(func(n int) time.Duration {
		a, b := 1, 1
		for range n - 1 {
			a, b = b, a+b
		}
		return time.Duration(a) * time.Second
	})
	s := backoff.NewStrategy(backoff.Cap(fib, 10*time.Second))
	for range 7 {
		fmt.Print(s.Next(), " ")
	}
	fmt.Println()
	// Output: 1s 1s 2s 3s 5s 8s 10s
}

func ExampleKeyed() {
	// The zero Keyed is client-go's ImagePullBackOff: the kubelet schedule,
	// and a key idle for more than 600s starts over.
	var pulls backoff.Keyed[string]
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 3 {
		d := pulls.Next("nginx:1.27", now)
		fmt.Println("wait", d, "- in back-off halfway:", pulls.InBackoff("nginx:1.27", now.Add(d/2)))
		now = now.Add(d)
	}
	fmt.Println("after 11 idle minutes: wait", pulls.Next("nginx:1.27", now.Add(11*time.Minute)))
	// Output:
	// wait 10s - in back-off halfway: true
	// wait 20s - in back-off halfway: true
	// wait 40s - in back-off halfway: true
	// after 11 idle minutes: wait 10s
}

func ExampleNewKeyed() {
	// Per-host back-off for an HTTP client: 1s doubling to a minute, and a
	// host left alone for five minutes starts over.
	hosts := backoff.NewKeyed[string](backoff.Cap(backoff.Exponential(time.Second, 2), time.Minute), 5*time.Minute)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fmt.Println(hosts.Next("api.example.com", now), hosts.Next("api.example.com", now), hosts.Next("cdn.example.com", now))
	// Output: 1s 2s 1s
}

func ExampleKeyed_Forget() {
	// A pull that succeeded: forget the image, and its next failure starts
	// over at the first delay instead of carrying on from 40s.
	var pulls backoff.Keyed[string]
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fmt.Print(pulls.Next("nginx:1.27", now), " ", pulls.Next("nginx:1.27", now), " ")
	pulls.Forget("nginx:1.27")
	fmt.Println("| after Forget:", pulls.Next("nginx:1.27", now), "| keys held:", pulls.Len())
	// Output: 10s 20s | after Forget: 10s | keys held: 1
}

func ExampleCap() {
	// The kubelet back-off as a bare schedule: 10s, doubling, capped at 300s.
	s := backoff.Cap(backoff.Exponential(10*time.Second, 2), 300*time.Second)
	for n := 1; n <= 7; n++ {
		fmt.Print(s.Delay(n), " ")
	}
	fmt.Println("...")

	// client-go's ImagePullBackOff, spelled out, is the zero Keyed.
	pulls := backoff.NewKeyed[string](s, 600*time.Second)
	var zero backoff.Keyed[string]
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	same := true
	for _, gap := range []time.Duration{0, time.Minute, 5 * time.Minute, 9 * time.Minute, 11 * time.Minute, time.Second} {
		now = now.Add(gap)
		same = same && pulls.Next("nginx:1.27", now) == zero.Next("nginx:1.27", now)
	}
	fmt.Println("the same delays as the zero Keyed:", same)
	// Output:
	// 10s 20s 40s 1m20s 2m40s 5m0s 5m0s ...
	// the same delays as the zero Keyed: true
}
