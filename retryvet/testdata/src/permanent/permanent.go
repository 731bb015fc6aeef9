package permanent

import (
	"errors"
	"fmt"

	"github.com/retrykit/retrykit/retry"
)

var errBad = errors.New("bad request")

const format = "fetch: %v"

// The bad cases: the mark is formatted away.

func percentV(err error) error {
	return fmt.Errorf("fetch: %v", retry.Permanent(err)) // want `fmt.Errorf formats retry.Permanent\(err\) with %v, which drops the permanent mark, so the call goes on retrying: use %w`
}

func percentS(name string) error {
	return fmt.Errorf("%s: %s", name, retry.Permanent(errBad)) // want `formats retry.Permanent\(errBad\) with %s`
}

func flags(err error) error {
	return fmt.Errorf("fetch:\t%+v", retry.Permanent(err)) // want `with %\+v`
}

func index(name string, err error) error {
	return fmt.Errorf("%[2]v (%[1]s)", name, retry.Permanent(err)) // want `with %\[2\]v`
}

func star(width int, err error) error {
	return fmt.Errorf("%*s", width, retry.Permanent(err)) // want `with %\*s`
}

func raw(err error) error {
	return fmt.Errorf(`fetch "%v"`, retry.Permanent(err)) // want `with %v`
}

func constant(err error) error {
	return fmt.Errorf(format, retry.Permanent(err)) // want `with %v`
}

func multiline(name string, err error) error {
	return fmt.Errorf("fetch %s: %v",
		name,
		retry.Permanent(err), // want `with %v`
	)
}

func parenthesized(err error) error {
	return fmt.Errorf("fetch: %q", (retry.Permanent(err))) // want `with %q`
}

// The good cases.

func wrapped(err error) error {
	return fmt.Errorf("fetch: %w", retry.Permanent(err))
}

func wrappedByIndex(name string, err error) error {
	return fmt.Errorf("%[2]w (%[1]v)", name, retry.Permanent(err))
}

func notPermanent(err error) error {
	return fmt.Errorf("fetch: %v", err)
}

func markedAfter(err error) error {
	return retry.Permanent(fmt.Errorf("fetch: %v", err))
}

func markedAgain(err error) error {
	return retry.Permanent(fmt.Errorf("fetch: %v", retry.Permanent(err)))
}

func percentPercent(err error) error {
	return fmt.Errorf("100%%: %w", retry.Permanent(err))
}

func notErrorf(err error) string {
	return fmt.Sprintf("fetch: %v", retry.Permanent(err))
}
