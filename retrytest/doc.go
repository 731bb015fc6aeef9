// Package retrytest helps test code that retries: an [Injector] makes calls
// fail on purpose, by a script or at random from a seed, and a [Clock]
// stands in for time and tells the test each time the code under test
// starts a wait.
//
// # Faults
//
// A [Plan] is a script of [Step]s: a [Fault] for a number of calls, for a
// time, or forever, on every call or at a rate. [New] checks the plan and
// returns an [Injector], which makes the faults strike in four places:
//
//   - a plain operation, through [Wrap] and [WrapValue];
//   - an HTTP server, through [Injector.Handler];
//   - an HTTP client, through [Injector.Transport];
//   - gRPC clients and servers, through the interceptors of package
//     retrygrpctest, in module retrygrpc.
//
// A test of a client that must ride out two 503s with Retry-After:
//
//	func TestClientRidesOut503s(t *testing.T) {
//		in, err := retrytest.New(retrytest.Plan{
//			Steps: []retrytest.Step{{Fault: retrytest.Fault{Status: 503, Hint: time.Second}, Times: 2}, {}},
//		})
//		if err != nil {
//			t.Fatal(err)
//		}
//		srv := httptest.NewServer(in.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//			fmt.Fprintln(w, "ok")
//		})))
//		defer srv.Close()
//		defer in.Close()
//		// ... the client under test calls srv.URL, and rides out the 503s.
//		if got := in.Counts().Statuses; got != 2 {
//			t.Errorf("%d 503s sent, want 2", got)
//		}
//	}
//
// The same plan and Seed give the same faults to the same sequence of calls,
// on every run, so that a failure found at random can be replayed.
// [Injector.SetEnabled] switches the faults off and on while calls run: an
// outage, then its end. [Plan.OnInject] and [Injector.Counts] tell what
// struck.
//
// # Inside testing/synctest
//
// A fault's Latency waits on the plan's Clock, the real one by default,
// whose time is virtual inside a testing/synctest bubble: a test of a
// minute of back-off runs at once, and time.Since measures the waits
// exactly. A bubble's time moves only while every goroutine in it is
// blocked on something the bubble controls, which a real socket is not:
// serve HTTP with [NewServer], which runs an httptest.Server on an
// in-memory network, and use its Client. The same test as above:
//
//	func TestClientRidesOut503sInABubble(t *testing.T) {
//		synctest.Test(t, func(t *testing.T) {
//			in, err := retrytest.New(retrytest.Plan{
//				Steps: []retrytest.Step{{Fault: retrytest.Fault{Status: 503, Hint: time.Second}, Times: 2}, {}},
//			})
//			if err != nil {
//				t.Fatal(err)
//			}
//			srv := retrytest.NewServer(in.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//				fmt.Fprintln(w, "ok")
//			})))
//			defer srv.Close()
//			tr, err := retryhttp.New(srv.Client().Transport, policy.Default())
//			if err != nil {
//				t.Fatal(err)
//			}
//			start := time.Now()
//			resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
//			if err != nil {
//				t.Fatal(err)
//			}
//			resp.Body.Close()
//			if waited := time.Since(start); waited != 2*time.Second {
//				t.Errorf("waited %v, want the two hints of 1s", waited)
//			}
//		})
//	}
//
// # The mock-clock race
//
// Outside a bubble, a mock clock lets a test control time. The usual race
// with one is advancing it before the code under test has registered its
// timer: the wake-up is lost and the test hangs or passes by luck. With
// [Clock] the test first waits for the wait, then advances:
//
//	func TestReconnect(t *testing.T) {
//		attempts := 0
//		op := func(ctx context.Context) error {
//			if attempts++; attempts < 3 {
//				return errors.New("connection refused")
//			}
//			return nil
//		}
//		clk := retrytest.NewClock()
//		done := make(chan error, 1)
//		go func() { done <- retry.Do(context.Background(), op, policy.Default().WithClock(clk)) }()
//
//		// Step blocks until Do is parked in a back-off, then advances by its delay.
//		if d := clk.Step(t); d != 10*time.Second {
//			t.Errorf("first back-off %v, want 10s", d)
//		}
//		if d := clk.Step(t); d != 20*time.Second {
//			t.Errorf("second back-off %v, want 20s", d)
//		}
//		if err := <-done; err != nil {
//			t.Errorf("Do = %v, want nil", err)
//		}
//	}
//
// Give the same Clock to a Plan, and a fault's Latency is a wait that Step
// sees and ends.
package retrytest
