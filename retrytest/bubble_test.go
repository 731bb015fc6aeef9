//go:build go1.25

package retrytest_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retryhttp"
	"github.com/retrykit/retrykit/retrytest"
)

// The examples of the package, as a user's tests would run them: in a
// testing/synctest bubble, on the real clock, whose time is virtual there.

// The package documentation's test, as it is there.
func TestClientRidesOut503sInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in, err := retrytest.New(retrytest.Plan{
			Steps: []retrytest.Step{{Fault: retrytest.Fault{Status: 503, Hint: time.Second}, Times: 2}, {}},
		})
		if err != nil {
			t.Fatal(err)
		}
		srv := retrytest.NewServer(in.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintln(w, "ok")
		})))
		defer srv.Close()
		tr, err := retryhttp.New(srv.Client().Transport, policy.Default())
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if waited := time.Since(start); waited != 2*time.Second {
			t.Errorf("waited %v, want the two hints of 1s", waited)
		}
	})
}

// ExampleInjector_Handler in a bubble, with the Retry-After as a date and a
// client whose policy gives up: the 503s outlast its attempts.
func TestClientGivesUpOn503sInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, retrytest.Plan{
			Steps: []retrytest.Step{{Fault: retrytest.Fault{Status: 503, Hint: 2 * time.Second, HintDate: true}, Times: 5}, {}},
		})
		srv := retrytest.NewServer(in.Handler(&counted{}))
		defer srv.Close()
		tr, err := retryhttp.New(srv.Client().Transport, policy.Default().WithMaxAttempts(3))
		require.NoError(t, err)
		start := time.Now()
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, 503, resp.StatusCode)
		require.ErrorContains(t, retryhttp.Err(resp), "gave up after 3 attempts")
		// The bubble's clock starts on a whole second, so the dates are exact.
		require.Equal(t, 4*time.Second, time.Since(start))
		require.Equal(t, retrytest.Counts{Calls: 3, Injected: 3, Hints: 3, Statuses: 3}, in.Counts())
	})
}

// The client side: the kit's Transport beneath retryhttp's, so that no
// server needs to be touched. A reset and a stall that
// the per-attempt timeout cuts: the request rides out both.
func TestTransportBeneathRetryhttpInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := mustNew(t, retrytest.Plan{
			Steps: []retrytest.Step{
				{Fault: retrytest.Fault{Reset: true}, Times: 1},
				{Fault: retrytest.Fault{Stall: true}, Times: 1},
				{}, // then every call goes through
			},
		})
		srv := retrytest.NewServer(&counted{})
		defer srv.Close()
		p := policy.Constant(time.Second).WithMaxAttempts(4).WithAttemptTimeout(10 * time.Second)
		tr, err := retryhttp.New(in.Transport(srv.Client().Transport), p)
		require.NoError(t, err)
		start := time.Now()
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		require.NoError(t, err)
		text, err := readAll(t, resp)
		require.NoError(t, err)
		require.Equal(t, body, text)
		require.Equal(t, time.Second+10*time.Second+time.Second, time.Since(start), "a pause, a stall cut at 10s, a pause")
		require.Equal(t, retrytest.Counts{Calls: 3, Injected: 2, Resets: 1, Stalls: 1}, in.Counts())
	})
}
