package ctx

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"time"

	"github.com/retrykit/retrykit/policy"
	"github.com/retrykit/retrykit/retry"
	"golang.org/x/sync/errgroup"
)

var p = policy.Default().WithMaxAttempts(3)

func fetch(ctx context.Context, url string) error { return nil }

type client struct{}

func (client) Call(ctx context.Context, name string) (string, error) { return name, nil }

// The bad cases: the operation's context is unnamed, blank or unused, and
// something in it takes a context.

func unnamed(ctx context.Context) error {
	return retry.Do(ctx, func(context.Context) error {
		return fetch(ctx, "a") // want `the operation of retry.Do ignores its context parameter, yet calls fetch, which takes a context`
	}, p)
}

func blank(ctx context.Context) error {
	return retry.Do(ctx, func(_ context.Context) error {
		return fetch(ctx, "a") // want `the operation of retry.Do ignores its context parameter`
	}, p)
}

func unused(parent context.Context) error {
	return retry.Do(parent, func(ctx context.Context) error {
		return fetch(parent, "a") // want `the operation of retry.Do never uses its context ctx, yet calls fetch, which takes a context: pass it ctx`
	}, p)
}

func method(ctx context.Context, c client) (string, error) {
	return retry.DoValue(ctx, func(context.Context) (string, error) {
		return c.Call(ctx, "x") // want `retry.DoValue ignores its context parameter, yet calls c.Call`
	}, p)
}

func background(ctx context.Context, db *sql.DB) error {
	return retry.Hedge(ctx, func(context.Context) error {
		_, err := db.ExecContext(context.Background(), "update t set n = n + 1") // want `retry.Hedge ignores its context parameter, yet calls db.ExecContext`
		return err
	}, p)
}

func funcValue(ctx context.Context, call func(context.Context) error) error {
	return retry.Loop(ctx, func(context.Context) error {
		return call(ctx) // want `retry.Loop ignores its context parameter, yet calls call`
	}, p)
}

func group(ctx context.Context, g *errgroup.Group) {
	retry.Go(ctx, g, func(context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.com", nil) // want `retry.Go ignores its context parameter, yet calls http.NewRequestWithContext`
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}, p)
}

func hedgeValue(ctx context.Context, c client) (string, error) {
	return retry.HedgeValue(ctx, func(context.Context) (string, error) {
		var s string
		if s == "" {
			return c.Call(ctx, "x") // want `retry.HedgeValue ignores its context parameter`
		}
		return s, nil
	}, p, func(string) {})
}

func inNestedLiteral(ctx context.Context) error {
	return retry.Do(ctx, func(context.Context) error {
		errs := make(chan error, 1)
		go func() { errs <- fetch(ctx, "a") }() // want `retry.Do ignores its context parameter`
		return <-errs
	}, p)
}

func parenthesized(ctx context.Context) error {
	return retry.Do(ctx, (func(context.Context) error {
		return fetch(ctx, "a") // want `retry.Do ignores its context parameter`
	}), p)
}

// The good cases.

func uses(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		return fetch(ctx, "a")
	}, p)
}

func usesRenamed(parent context.Context) error {
	return retry.Do(parent, func(attempt context.Context) error {
		return fetch(attempt, "a")
	}, p)
}

func derived(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		return fetch(context.WithoutCancel(ctx), "a")
	}, p)
}

func usedInClosure(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		run := func() error { return fetch(ctx, "a") }
		return run()
	}, p)
}

func noContextCall(ctx context.Context) error {
	n := 0
	return retry.Do(ctx, func(context.Context) error {
		n++
		return nil
	}, p)
}

func register(h func(context.Context) error) error { return nil }

func literalWithItsOwnContext(ctx context.Context) error {
	return retry.Do(ctx, func(context.Context) error {
		return register(func(ctx context.Context) error { return fetch(ctx, "a") })
	}, p)
}

func op(context.Context) error { return nil }

func namedOperation(ctx context.Context) error {
	return retry.Do(ctx, op, p)
}

// fake has a Do method shaped like retry.Do: the check matches the retry
// package, not the name.
type fake struct{}

func (fake) Do(ctx context.Context, fn func(context.Context) error, p policy.Policy) error {
	return nil
}

func notRetry(ctx context.Context, f fake) error {
	return f.Do(ctx, func(context.Context) error { return fetch(ctx, "a") }, p)
}

// The parameter overwritten before any read counts as ignored.

func redeclared(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second) // want `the operation of retry.Do overwrites its context ctx before reading it, yet calls context.WithTimeout, which takes a context: derive the new context from ctx`
		defer cancel()
		return fetch(ctx, "a")
	}, p)
}

func assigned(ctx, base context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		fmt.Println("attempt")
		ctx = base
		return fetch(ctx, "a") // want `retry.Do overwrites its context ctx before reading it, yet calls fetch`
	}, p)
}

func overwrittenInValue(ctx context.Context, c client) (string, error) {
	return retry.DoValue(ctx, func(attempt context.Context) (string, error) {
		attempt, cancel := context.WithCancel(ctx) // want `retry.DoValue overwrites its context attempt before reading it, yet calls context.WithCancel`
		defer cancel()
		return c.Call(attempt, "x")
	}, p)
}

func derivedValue(ctx context.Context, key any) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		ctx = context.WithValue(ctx, key, 1)
		return fetch(ctx, "a")
	}, p)
}

func derivedTimeout(ctx context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		return fetch(ctx, "a")
	}, p)
}

func readFirst(ctx, base context.Context) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		if err := fetch(ctx, "a"); err != nil {
			return err
		}
		ctx = base
		return fetch(ctx, "b")
	}, p)
}

func overwrittenInBranch(ctx, base context.Context, fresh bool) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		if fresh {
			ctx = base
		}
		return fetch(ctx, "a")
	}, p)
}

func readByTheStore(ctx context.Context, m map[context.Context]int) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		m[ctx], ctx = 1, context.Background()
		return fetch(ctx, "a")
	}, p)
}

func jumped(ctx, base context.Context, skip bool) error {
	return retry.Do(ctx, func(ctx context.Context) error {
		if skip {
			goto call
		}
		ctx = base
	call:
		return fetch(ctx, "a")
	}, p)
}
