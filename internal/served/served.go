// Package served is the record that a server keeps of the retrykit calls
// made while it serves one request, and that tells it whether its failed
// answer should ask the caller not to retry. retryhttp.Handler and
// retrygrpc's server interceptors make the record, package retry fills it
// in, and the clients of retryhttp and retrygrpc read the previous
// attempts from it. The rule that it serves is stated in docs/layers.md
// ("The rule") and in the doc of retryhttp.Handler.
package served

import (
	"context"
	"sync/atomic"
)

// The verdicts of a failed call, as [Record.Tell] takes them.
const (
	None   = iota // no call on the context has failed
	Retry         // the last failed call says a retry upstream may succeed
	Repeat        // the last failed call says a retry upstream would only repeat it
)

// Record is what a server knows of the calls made while it serves one
// request: how many attempts of the request came before, which failures
// never reached a dependency, and the verdict of the call that failed
// last. Get one with [Serve]. A nil *Record answers as the record of a
// first attempt in which nothing failed. A Record is safe for concurrent
// use.
type Record struct {
	previous  int
	unreached func(error) bool
	last      atomic.Int32 // the verdict of the call that failed last
}

type key struct{}

// Serve returns a copy of ctx that carries a new Record, and the Record.
// previous is how many attempts of the request being served came before
// this one, 0 for a first attempt, as a caller's previous-attempts header
// says. A negative previous counts as 0. unreached tells the failures that
// never reached a dependency, such as a refused or reset connection: the
// server side imports the network, package retry does not. A nil
// unreached finds none.
func Serve(ctx context.Context, previous int, unreached func(error) bool) (context.Context, *Record) {
	r := &Record{previous: max(previous, 0), unreached: unreached}
	return context.WithValue(ctx, key{}, r), r
}

// From returns the Record that ctx carries, or nil.
func From(ctx context.Context) *Record {
	if ctx == nil {
		return nil
	}
	r, _ := ctx.Value(key{}).(*Record)
	return r
}

// PreviousAttempts returns the attempts that came before the request that
// ctx serves, as given to [Serve], and 0 when ctx serves none. A client
// adds it to the previous attempts it sends downstream, so that a server
// called while serving a retry knows that it serves one too.
func PreviousAttempts(ctx context.Context) int {
	return From(ctx).Previous()
}

// Previous returns the previous attempts given to [Serve]. A nil *Record
// has 0.
func (r *Record) Previous() int {
	if r == nil {
		return 0
	}
	return r.previous
}

// Unreached reports whether err says, by the function given to [Serve],
// that the dependency was not reached. A nil *Record says false.
func (r *Record) Unreached(err error) bool {
	return r != nil && r.unreached != nil && err != nil && r.unreached(err)
}

// Tell records the verdict of a call that failed: [Retry] or [Repeat]. The
// call that failed last decides. A nil *Record records nothing.
func (r *Record) Tell(verdict int) {
	if r != nil {
		r.last.Store(int32(verdict))
	}
}

// Pushback reports whether a failed answer should ask the caller not to
// retry: the call that failed last said [Repeat]. A nil *Record says false.
func (r *Record) Pushback() bool {
	return r != nil && r.last.Load() == Repeat
}
