// Package retryhttp retries HTTP requests through an [http.RoundTripper], so
// that a plain http.Client retries. Build a [Transport] with [New] and give it
// to the client:
//
//	tr, err := retryhttp.New(nil, policy.Exponential(100*time.Millisecond).WithMaxAttempts(4))
//	if err != nil {
//		return err // the policy is not valid
//	}
//	client := &http.Client{Transport: tr}
//	resp, err := client.Get("https://example.com/")
//	if err != nil {
//		return err
//	}
//	defer resp.Body.Close()
//
// A request is retried after a connection error, or a 429, 502, 503 or 504
// response. A 500 is not retried. [DefaultRetryable] states the rule, and
// [WithClassifier] replaces it.
//
// By default, only requests that are safe to repeat are retried: a POST or
// a PATCH is sent once unless it carries an Idempotency-Key header.
// [WithIdempotencyKeys] gives each such request one.
//
// A request body is sent again only from Request.GetBody, which
// http.NewRequest sets for in-memory bodies. A request with a body and no
// GetBody is sent once.
//
// When the retries end with a response in hand, RoundTrip returns that
// response with a nil error, as a plain client would. [Err] says why it was
// not retried.
//
// A Retry-After header is honoured as given. One that would pass the
// policy's hint ceiling (policy.Policy.WithMaxHint), its time limit or the
// request's deadline ends the retries at once, with the response.
//
// Every Transport that New builds has a guard that holds back retries that
// are not paying off. Use one Transport per dependency (see [New]).
//
// [Handler] is the server side: it tells a Transport when a retry would
// fail again. docs/http.md has the details.
package retryhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/retrykit/retrykit/internal/admission"
	"github.com/retrykit/retrykit/internal/admit"
	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
)

// defaultMaxAttempts bounds the attempts of a request whose policy has
// neither an attempt limit nor a time limit.
const defaultMaxAttempts = 5

// defaultPolicy is what a zero Transport uses.
var defaultPolicy = policy.Default().WithMaxAttempts(defaultMaxAttempts)

// Transport is an http.RoundTripper that retries requests through a base
// RoundTripper under a policy. Build one with [New]. The package doc says
// what is retried. A Transport is safe for concurrent use.
//
// A zero Transport works, but it is not what New(nil, p) builds. It sends
// through http.DefaultTransport, runs policy.Default() bounded to 5
// attempts, and has no guard.
//
// When retrying ends with no response in hand, RoundTrip returns a nil
// response and a *retry.Error. That happens after a connection error, or
// when the request's context ends during a wait or a retry. The error matches
// the reason and the last error, as docs/calls.md lists under "How a call
// ends". An http.Client wraps it in a *url.Error, which errors.Is and
// errors.As see through.
//
// The policy's attempt timeout (policy.Policy.WithAttemptTimeout) bounds how
// long each attempt may take to send its response headers. It never cuts the
// body of the response handed back.
//
// A response with the header "Retry-Pushback: never" is not retried: its
// server already retried (see [Handler]). Each retry carries the header
// "Retry-Previous-Attempts" with the count of attempts before it.
//
// A base RoundTripper reads the number of the attempt it sends with
// retry.Attempt(req.Context()).
type Transport struct {
	config
	base      http.RoundTripper
	p         policy.Policy    // the policy given, bounded, without its attempt timeout
	timeout   time.Duration    // the policy's per-attempt timeout
	retryIf   func(error) bool // the policy's own predicate, asked by the Transport rather than the loop
	loopFirst bool             // the loop makes the first attempt too (see firstTry)
	built     bool

	derived derivations // the Transports of policies of requests' contexts (see ContextWithPolicy)
}

// An Option configures a [Transport] built by [New]. A nil Option changes
// nothing. Its shape is that of retry.Option.
type Option func(config) config

// config is what the Options of a Transport set.
type config struct {
	retryable func(req *http.Request, resp *http.Response, err error) bool
	opts      []retry.Option // given with WithRetryOptions, clipped
	keys      bool           // WithIdempotencyKeys was given
}

// WithClassifier returns an Option that replaces the Transport's
// classification, [DefaultRetryable], with f: f alone decides which requests,
// responses and errors are retried, whatever the method. f gets the
// attempt's resp or err, and exactly one of them is non-nil. f must not read
// the body. A nil f keeps the default.
//
// The policy's own predicate (policy.Policy.WithRetryIf) still applies after
// f, and can only refuse more.
func WithClassifier(f func(req *http.Request, resp *http.Response, err error) bool) Option {
	return func(c config) config {
		if f != nil {
			c.retryable = f
		}
		return c
	}
}

// WithRetryOptions returns an Option that passes opts to the retry loop of
// every request, for example retry.WithHooks to log each retry. The options
// of several WithRetryOptions add up.
func WithRetryOptions(opts ...retry.Option) Option {
	opts = slices.Clone(opts)
	return func(c config) config {
		c.opts = slices.Clip(append(c.opts, opts...))
		return c
	}
}

// New returns a Transport that sends requests through base and retries them
// under p. A nil base means a shared copy of http.DefaultTransport that keeps
// 100 idle connections per host, where the default keeps 2, so that retries
// reuse connections.
//
// New returns an error matching policy.ErrInvalid, and no Transport, when p
// is not valid. So a bad policy from a configuration file shows once, where
// the Transport is built.
//
// A p with neither an attempt limit nor a time limit stops after 5 attempts.
//
// Every Transport has a guard, shared by its requests, that holds back
// retries when they stop paying off: the guard in p (policy.Policy.WithGuard),
// or else policy.NewGuard(50, 1). Use one Transport per dependency.
// docs/admission.md says how the guard decides.
//
// When p hedges (policy.Policy.WithHedging), so does the Transport, for
// requests that are safe to repeat and whose body can be sent again.
//
// To size the connection pool yourself, pass a base:
//
//	base := http.DefaultTransport.(*http.Transport).Clone()
//	base.MaxIdleConnsPerHost = 64 // the requests one host may have in flight at once
//	tr, err := retryhttp.New(base, p)
func New(base http.RoundTripper, p policy.Policy, opts ...Option) (*Transport, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("retryhttp: %w", err)
	}
	if base == nil {
		base = pooled()
	}
	t := &Transport{base: base, built: true}
	for _, opt := range opts {
		if opt != nil { // a nil Option is no option, as in package retry
			t.config = opt(t.config)
		}
	}
	t.adopt(admission.Guarded(p))
	return t, nil
}

// adopt makes p, a valid policy with the guard its requests share, the
// policy of t's requests. p is bounded as New says, and its attempt timeout
// and its predicate are taken out for the Transport to apply itself.
func (t *Transport) adopt(p policy.Policy) {
	t.timeout = p.AttemptTimeout()
	if p.MaxAttempts() == 0 && p.MaxElapsed() == 0 {
		p = p.WithMaxAttempts(defaultMaxAttempts)
	}
	if t.timeout > 0 {
		// The Transport times attempts itself: package retry would cancel
		// an attempt's context when it returns, cutting the body off.
		p = p.WithAttemptTimeout(0)
	}
	// The Transport asks the policy's predicate itself (see toRetry), so
	// that an outcome it refuses is final as one WithClassifier refuses.
	t.retryIf, t.p = p.Retryable, p.WithRetryIf(nil)
	t.loopFirst = len(t.opts) > 0 || t.timeout > 0 || p.MaxElapsed() > 0 || p.ResetRule().AfterStableRun > 0
}

// pooled returns the base of Transports built on a nil base: a clone of
// http.DefaultTransport, made on first use, whose idle pool may hold as
// many connections for one host as in all. A program that replaced
// http.DefaultTransport with another RoundTripper gets that one as it is.
var pooled = sync.OnceValue(func() http.RoundTripper {
	dt, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t := dt.Clone()
	t.MaxIdleConnsPerHost = max(t.MaxIdleConns, idlePerHost)
	return t
})

// idlePerHost is the idle connections per host that pooled keeps at least:
// http.DefaultTransport's MaxIdleConns.
const idlePerHost = 100

// statusError is the error of an attempt that got a response to retry. It
// keeps the status alone: the response itself is released before the wait.
type statusError struct {
	status string
	code   int
	final  bool // a failure response that is not retried: the call's result (see unretried)
}

func (e *statusError) Error() string { return "status " + e.status }

// StatusCode returns the response's status code. retryotel reads it for the
// error.type of an attempt's span, as OpenTelemetry's HTTP conventions give
// a failed response's.
func (e *statusError) StatusCode() int { return e.code }

// Timeout reports whether the status tells of overload as a timeout does:
// 504 Gateway Timeout, and 429 Too Many Requests, a request the server
// shed. Package retry reads it, and the guard takes both for overload.
func (e *statusError) Timeout() bool {
	return e.code == http.StatusGatewayTimeout || e.code == http.StatusTooManyRequests
}

// RoundTrip sends req, retrying it as the package doc says.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if o, ok := req.Context().Value(overrideKey{}).(*override); ok {
		return t.roundTripUnder(req, o) // see ContextWithPolicy and ContextWithoutRetry
	}
	return t.roundTrip(t.keyed(req))
}

// roundTrip sends req under the Transport's own policy.
func (t *Transport) roundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.Body != nil && req.Body != http.NoBody && req.GetBody == nil:
		// The body cannot be sent twice: the call makes one attempt, which
		// the guard admits and hears of as any other.
		c := t.newCall(req)
		c.p = c.p.WithMaxAttempts(1)
		return c.run()
	case t.hedged(req):
		c := t.newCall(req)
		return c.runHedged()
	case t.loopFirst:
		c := t.newCall(req)
		return c.run()
	}
	return t.firstTry(req)
}

// firstTry makes the first attempt of a request before any of the retry
// loop is set up, so that a request that succeeds at once costs about what
// it costs through the base RoundTripper. The loop starts only when the
// outcome is one to retry, and takes that outcome as its first attempt's.
// The guard hears of the outcome as the loop would tell it.
//
// A Transport with options, a per-attempt timeout, a time limit or a
// stable-run reset rule has the loop make the first attempt too (see
// loopFirst): hooks see every request, and the loop's clock starts with it.
func (t *Transport) firstTry(req *http.Request) (*http.Response, error) {
	base, p, retryable := t.settings()
	g := admission.Of(p)
	if g.Held() || retry.Attempt(req.Context()) > 1 {
		// The guard holds new calls back: the loop waits for the call's
		// turn as it does for any call, and nothing is sent meanwhile. Or
		// the request is made inside a later attempt of another call: the
		// loop numbers this call's first attempt 1 (see retry.Attempt).
		c := t.newCall(req)
		return c.run()
	}
	var start time.Time
	if _, timed := req.Context().Deadline(); timed {
		start = now(p.Clock()) // the call's time counts from here, should it retry
	}
	resp, err := sendFirst(base, withPrevious(req, 1), g)
	switch {
	case retryable(req, resp, err), err != nil && req.Context().Err() != nil:
		// To retry, or the request's context ended the call, which the loop
		// reports as it reports the context ending during a retry.
		c := t.newCall(req)
		c.n, c.first = 1, firstAttempt{resp: resp, err: err, start: start, made: true, pending: true}
		return c.run()
	case err != nil || failed(resp):
		c := t.newCall(req)
		c.tell(false, resp, err) // a failure, which final tells on the loop's path
		recordFailure(req, resp, err)
		return resp, err
	}
	if g != nil && req.Context().Err() == nil {
		g.Record(false, admit.Succeeded) // a success, which the loop tells on its path
	}
	return resp, nil
}

// sendFirst sends the first attempt of firstTry through base. The guard,
// if any, counts the call in flight and the attempt as running until base
// returns, a panic included. The loop, should it retry, tells the guard of
// the call again.
func sendFirst(base http.RoundTripper, req *http.Request, g *admit.Guard) (*http.Response, error) {
	if g != nil {
		g.Start()
		defer g.Done()
		if t := g.Enter(); t != nil {
			g.Abandon(t) // held back since Held: sent all the same, as the guard lost the race
		} else {
			defer g.Leave()
		}
	}
	return base.RoundTrip(req)
}

// settings returns the base RoundTripper, the policy and the
// classification that the Transport's requests use, a zero Transport's
// defaults included.
func (t *Transport) settings() (http.RoundTripper, policy.Policy, func(*http.Request, *http.Response, error) bool) {
	base, p, retryable := t.base, t.p, t.retryable
	if base == nil {
		base = http.DefaultTransport
	}
	if !t.built {
		p = defaultPolicy
	}
	if retryable == nil {
		retryable = DefaultRetryable
	}
	return base, p, retryable
}

// newCall returns the call of one RoundTrip.
func (t *Transport) newCall(req *http.Request) call {
	base, p, retryable := t.settings()
	return call{t: t, req: req, base: base, p: p, retryable: retryable}
}

// call is the state of one RoundTrip that may retry.
type call struct {
	t         *Transport
	req       *http.Request
	base      http.RoundTripper
	p         policy.Policy
	retryable func(*http.Request, *http.Response, error) bool

	hooks retry.Hooks
	n     int            // attempts sent
	held  *http.Response // the last retryable response, not yet released
	next  *http.Request  // the next attempt's request, its body rewound already

	first firstAttempt // the first attempt, when firstTry made it before the loop started
	named namedContext // the context of the retry loop, when it names the request (see loopContext)
}

// firstAttempt is the outcome of a first attempt that firstTry made
// before the loop started, for the loop to take as its own.
type firstAttempt struct {
	resp    *http.Response
	err     error
	start   time.Time     // when it started; read only for a request with a deadline
	toLoop  time.Duration // from its start to the loop's
	made    bool          // firstTry made the first attempt
	pending bool          // the loop has yet to take its outcome
}

// elapsed returns the time of a call whose loop took d: the loop's clock
// started after the first attempt, whose time is added. A request that
// reads no clock (see Err) read none for its first attempt either: its
// call tells no time, rather than one that leaves that attempt out, as
// package retry's calls that read no clock.
func (f *firstAttempt) elapsed(d time.Duration) time.Duration {
	if f.start.IsZero() {
		return 0
	}
	return f.toLoop + d
}

// run makes the request's attempts through the retry loop and returns
// what RoundTrip returns.
func (c *call) run() (*http.Response, error) {
	resp, err := c.loop()
	ctx := c.req.Context()
	if c.next != nil && c.next.Body != nil {
		_ = c.next.Body.Close() // rewound for an attempt that never came
	}
	if err == nil || unretried(err) {
		return resp, nil
	}
	if c.n == 0 && c.req.Body != nil {
		_ = c.req.Body.Close() // no attempt ran: the body is still ours to close
	}
	if c.held == nil {
		return nil, err
	}
	// The call ended with a retryable response in hand, which no further
	// attempt follows: the policy's limits, the guard, a hint too long, the
	// deadline. Err tells why.
	if ctx.Err() == nil {
		return withErr(c.held, c.req, err), nil // the final response, its body untouched
	}
	release(c.held)
	c.held = nil
	return nil, fmt.Errorf("retryhttp: %s %s: %w", c.req.Method, c.req.URL.Redacted(), err)
}

// loop runs the retry loop, and returns its result.
func (c *call) loop() (*http.Response, error) {
	ctx := c.req.Context()
	c.hooks.OnRetry = c.onRetry
	first := &c.first
	if first.made && !first.start.IsZero() {
		first.toLoop = now(c.p.Clock()).Sub(first.start)
	}
	var resp *http.Response
	var err error
	if len(c.t.opts) == 0 { // no slice to build: the common case allocates nothing more
		resp, err = retry.DoValue(ctx, c.attempt, c.p, retry.WithHooks(&c.hooks))
	} else {
		resp, err = retry.DoValue(c.loopContext(), c.attempt, c.p, c.t.options(retry.WithHooks(&c.hooks))...)
	}
	if first.pending {
		// The loop never took the first attempt's outcome: the request's
		// context ended, or the guard began to hold calls back, before it
		// started.
		cause := ctx.Err()
		if e, ok := err.(*retry.Error); ok && cause == nil {
			cause = e.Cause
			if cause == retry.ErrShed {
				// The request went out once: the guard held its retries
				// back, not the request, which ErrShed would say never ran.
				cause = retry.ErrThrottled
			}
		}
		c.held, err = first.resp, &retry.Error{Attempts: 1, Last: c.lastError(first.resp, first.err), Cause: cause}
	}
	if e, ok := err.(*retry.Error); ok && first.made {
		e.Elapsed = first.elapsed(e.Elapsed)
	}
	return resp, err
}

// onRetry runs when a wait is really about to start: the response of the
// attempt just made is not the final one, so it is released now rather
// than held for the length of the wait.
//
// With a guard, the retry may be denied after the wait and the call end
// there: the response is then the final one, so its body is kept in memory
// instead (up to 64 KiB), which frees its connection all the same.
func (c *call) onRetry(ctx context.Context, e retry.RetryEvent) {
	switch {
	case c.held == nil:
	case c.p.Guard() != nil:
		keep(c.held)
	default:
		release(c.held)
		c.held = nil
	}
}

// options returns the options of one request's retry loop: own, which
// releases responses, and then those given with WithRetryOptions, so that
// their hooks hear of a wait once its response is released.
func (t *Transport) options(own retry.Option) []retry.Option {
	return append([]retry.Option{own}, t.opts...)
}

// attempt makes one attempt and classifies its result for the retry loop.
// The loop's first attempt may have been made already, by firstTry: its
// outcome, one to retry, is then the loop's.
//
// The attempt is sent on ctx, the context the loop gives it, which
// carries the attempt's number (see retry.Attempt). That context is the
// request's own, or the one a hook gave the attempt
// (retry.Hooks.OnAttempt), so that the base RoundTripper's spans hang under
// the attempt's.
func (c *call) attempt(ctx context.Context) (*http.Response, error) {
	if c.first.pending {
		c.first.pending = false
		return c.toRetry(c.first.resp, c.first.err)
	}
	if c.held != nil {
		// A response kept through the wait (see onRetry): this attempt's
		// outcome replaces it as the final one.
		release(c.held)
		c.held = nil
	}
	r := c.req
	if c.n > 0 {
		r, c.next = c.next, nil
		if r == nil {
			r = withoutBody(c.req)
		}
	}
	c.n++
	if c.n > 1 || len(c.t.opts) > 0 || retry.Attempt(c.req.Context()) > 1 {
		// Only options bring hooks, which may give the first attempt a
		// context of its own, and only a request made inside another
		// call's attempt has its first attempt numbered apart: otherwise
		// the first attempt's context is the request's, unchanged.
		r = r.WithContext(ctx)
	}
	resp, err := c.send(withPrevious(r, c.n))
	if c.cutOff(c.n, err) {
		return nil, err
	}
	if !c.retryable(c.req, resp, err) {
		return c.final(resp, err, c.n > 1)
	}
	return c.toRetry(resp, err)
}

// cutOff reports whether the request's context ended during attempt n, a
// retry, which then failed with err. The loop then ends the call with the
// context's error, and with the failure before that attempt as the last
// error when err is only the context's (see retry.Error's Last): a 503
// before the cancelled retry is not lost. A first attempt cut off comes back
// as the base RoundTripper's error, as it does without retries.
func (c *call) cutOff(n int, err error) bool {
	return n > 1 && err != nil && c.req.Context().Err() != nil
}

// toRetry returns, for the loop, the outcome of an attempt that the
// Transport's classification retries, as retryError rules. A response to
// retry is held, and the request's body rewound for the next attempt.
func (c *call) toRetry(resp *http.Response, err error) (*http.Response, error) {
	e := c.retryError(resp, err)
	if e == nil {
		return c.final(resp, err, c.n > 1)
	}
	if _, ok := e.(*pushbackError); ok {
		c.held = resp // the final response: no attempt follows it
		return resp, e
	}
	// Whether the body can be sent again is part of whether the outcome
	// can be retried: it is rewound now, before the response is released,
	// and when GetBody fails the outcome is final, as for a body that has
	// no GetBody.
	if c.req.GetBody != nil {
		next, rerr := withBody(c.req)
		if rerr != nil {
			rerr = fmt.Errorf("retryhttp: rewinding the request body: %w", rerr)
			if err != nil {
				return nil, retry.Permanent(fmt.Errorf("%w (%w)", err, rerr))
			}
			c.held = resp
			return resp, retry.Permanent(rerr)
		}
		c.next = next
	}
	if err != nil {
		return nil, err
	}
	c.held = resp
	return resp, e
}

// retryError returns the error the loop sees for an outcome that the
// Transport's classification retries, hedged or not, and nil when the
// outcome is final after all. A response that asks not to be retried (see
// [Handler]) gives a *pushbackError: the loop ends the call with
// retry.ErrPushback, and the guard hears of overload. The header is read
// here alone, so a response the classification does not retry, such as a
// 200 or a 500, comes back as it is whatever it carries. Otherwise the
// policy's own predicate is asked, and an outcome it refuses is final.
func (c *call) retryError(resp *http.Response, err error) error {
	if err == nil && pushedBack(resp) {
		return &pushbackError{err: c.statusError(resp)}
	}
	e := c.lastError(resp, err)
	if !c.t.policyRetries(e) {
		return nil
	}
	return e
}

// policyRetries reports whether the policy's own predicate
// (policy.Policy.WithRetryIf) retries e, the error of an attempt that the
// Transport's classification retries.
func (t *Transport) policyRetries(e error) bool {
	return t.retryIf == nil || t.retryIf(e)
}

// lastError returns the error the loop would see for an attempt's outcome
// that is one to retry.
func (c *call) lastError(resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	return c.statusError(resp)
}

// statusError returns the error of an attempt that got resp, a response to
// retry, with the server's Retry-After as a hint.
func (c *call) statusError(resp *http.Response) error {
	err := error(&statusError{status: resp.Status, code: resp.StatusCode})
	if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), now(c.p.Clock())); ok {
		err = retry.After(d, err)
	}
	return err
}

// final ends the loop with an outcome that is not retried, of an attempt
// the guard admitted if admitted, hedged or not. The guard hears what the
// dependency did here rather than from the loop, which would take a
// response for a success (and the latency estimate would take it for a
// sample): a 503 to a POST is a failure of the dependency, whether or not
// the request may be retried. Such a response is still the call's result
// (see unretried).
func (c *call) final(resp *http.Response, err error, admitted bool) (*http.Response, error) {
	switch {
	case err != nil:
		c.tell(admitted, resp, err)
		return nil, retry.Permanent(err)
	case failed(resp):
		c.tell(admitted, resp, err)
		return resp, retry.Permanent(&statusError{status: resp.Status, code: resp.StatusCode, final: true})
	}
	return resp, nil // a success, which the loop tells the guard of
}

// unretried reports whether err, that of a finished call, is a failure
// response's that was not retried (see final): the response is the result.
func unretried(err error) bool {
	se, ok := err.(*statusError)
	return ok && se.final
}

// send makes one attempt through the base RoundTripper, under the policy's
// per-attempt timeout if it has one and it ends before the request's
// deadline: when the deadline comes first, or at the same instant, the
// deadline is what cuts the attempt off, and no timer races it.
func (c *call) send(r *http.Request) (*http.Response, error) {
	d := c.t.timeout
	if d <= 0 || c.deadlineFirst(r, d) {
		return c.base.RoundTrip(r)
	}
	ctx, cancel := context.WithCancel(r.Context())
	timer := afterFunc(c.p.Clock(), d, cancel)
	resp, err := c.base.RoundTrip(r.WithContext(ctx))
	if timer.Stop() { // the headers, or an error, came in time
		if err != nil {
			cancel()
			return nil, err
		}
		resp.Body = cancelOnClose(resp.Body, cancel)
		return resp, nil
	}
	if resp != nil {
		_ = resp.Body.Close() // its context is cancelled: the body is lost anyway
	}
	cancel()
	if cerr := c.req.Context().Err(); cerr != nil {
		// The caller's context ended too: its error is the one to report,
		// whichever cut the attempt off first; the attempt's own
		// cancellation is no news.
		if err == nil || errors.Is(err, cerr) || errors.Is(err, context.Canceled) {
			return nil, cerr
		}
		return nil, fmt.Errorf("%w: %w", cerr, err)
	}
	return nil, &attemptTimeoutError{timeout: d, err: err}
}

// deadlineFirst reports whether r's deadline comes no later than a timeout
// of d that starts now.
func (c *call) deadlineFirst(r *http.Request, d time.Duration) bool {
	dl, ok := r.Context().Deadline()
	return ok && !dl.After(now(c.p.Clock()).Add(d))
}

// attemptTimeoutError is the error of an attempt cut off by the policy's
// per-attempt timeout before it produced its response headers.
type attemptTimeoutError struct {
	timeout time.Duration
	err     error // the base transport's error, nil if it answered too late
}

// Error names the timeout, and the base transport's error when it says more
// than the cut itself. The cut cancels the attempt's context, so the base
// transport's error is often only context.Canceled. The caller cancelled
// nothing, so the message leaves it out.
func (e *attemptTimeoutError) Error() string {
	msg := fmt.Sprintf("retryhttp: no response headers within the attempt timeout of %v", e.timeout)
	if !e.onlyTheCut() {
		msg += ": " + e.err.Error()
	}
	return msg
}

// Unwrap returns ErrAttemptTimeout and context.DeadlineExceeded, as an
// attempt timeout in package retry matches. It adds the base transport's
// error when that says more than the cut itself, as Error does.
func (e *attemptTimeoutError) Unwrap() []error {
	if e.onlyTheCut() {
		return []error{retry.ErrAttemptTimeout, context.DeadlineExceeded}
	}
	return []error{retry.ErrAttemptTimeout, context.DeadlineExceeded, e.err}
}

// onlyTheCut reports whether the base transport's error says nothing beyond
// the cancellation of the cut: it is nil, or it matches context.Canceled.
func (e *attemptTimeoutError) onlyTheCut() bool {
	return e.err == nil || errors.Is(e.err, context.Canceled)
}

// CloseIdleConnections closes the idle connections of the base
// RoundTripper, when it has such a method. So http.Client.CloseIdleConnections
// reaches the base through the Transport.
func (t *Transport) CloseIdleConnections() {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if c, ok := base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func now(clk policy.Clock) time.Time {
	if clk != nil {
		return clk.Now()
	}
	return time.Now()
}

// withBody returns a shallow copy of req with a fresh body from GetBody.
func withBody(req *http.Request) (*http.Request, error) {
	r := *req
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r.Body = body
	}
	return &r, nil
}

// withoutBody returns a shallow copy of req, whose body, if any, cannot be
// sent again; only requests without one are retried without GetBody.
func withoutBody(req *http.Request) *http.Request {
	r := *req
	return &r
}
