package retry

import (
	"context"
	"errors"
	"log/slog"

	"github.com/retrykit/retrykit/internal/logattrs"
)

// SlogHooks returns hooks that log a call to l. They log through LogAttrs
// with the call's context, so that handlers see request-scoped values.
// They log:
//
//   - "retry: waiting" at level, for each wait before a retry. The record
//     has attempt, delay, elapsed and the error as a value,
//     slog.Any("error", err). None is logged after the final attempt. The
//     pause after a successful run of a Loop is not a retry, so it is
//     logged at slog.LevelDebug, with no error.
//   - "retry: denied" at level, for each retry the policy's guard denied
//     after its wait. The record has attempt, delay and elapsed as the
//     wait's record had them. The call then waits again, or ends throttled.
//   - "retry: gave up" at level, with the error, at the end of a call that
//     failed.
//   - "retry: succeeded" at the end of a call that retried or hedged and
//     then succeeded. A recovery is no warning, so it is logged at level or
//     at slog.LevelInfo, whichever is lower. The record has the hedges
//     started, and the attempt that won when it was not the last to start.
//   - "retry: stopped" at slog.LevelDebug, not as a failure, for a call
//     whose own context was cancelled. A Loop is logged as "retry: stopped"
//     too when its context is cancelled or reaches its deadline. That is the usual end
//     of a Loop. Any other call that reaches its context's deadline is
//     logged as "retry: gave up".
//
// A line of a call that retryhttp's Transport runs starts with the
// request's method and URL, as "method" and "url". The URL is given as
// url.URL.Redacted gives it: without the password.
//
// A first-try success logs nothing. A nil l logs to slog.Default(). The
// hooks are safe for concurrent use.
func SlogHooks(l *slog.Logger, level slog.Level) *Hooks {
	return &Hooks{
		OnDenied: func(ctx context.Context, e RetryEvent) {
			lg := logger(l)
			if !lg.Enabled(ctx, level) {
				return
			}
			attrs := logattrs.Append(ctx, make([]slog.Attr, 0, 5))
			attrs = append(attrs,
				slog.Int("attempt", e.Attempt),
				slog.Duration("delay", e.Delay),
				slog.Duration("elapsed", e.Elapsed))
			lg.LogAttrs(ctx, level, "retry: denied", attrs...)
		},
		OnRetry: func(ctx context.Context, e RetryEvent) {
			lg, lvl := logger(l), level
			if e.Err == nil {
				lvl = slog.LevelDebug // a Loop's pause after a healthy run
			}
			if !lg.Enabled(ctx, lvl) {
				return
			}
			attrs := logattrs.Append(ctx, make([]slog.Attr, 0, 8))
			attrs = append(attrs,
				slog.Int("attempt", e.Attempt),
				slog.Duration("delay", e.Delay),
				slog.Duration("elapsed", e.Elapsed))
			if e.Err != nil {
				attrs = append(attrs, slog.Any("error", e.Err))
			}
			if e.Hinted {
				attrs = append(attrs, slog.Bool("hinted", true))
			}
			if e.StartedOver {
				attrs = append(attrs, slog.Bool("reset", true))
			}
			lg.LogAttrs(ctx, lvl, "retry: waiting", attrs...)
		},
		OnDone: func(ctx context.Context, e DoneEvent) {
			if e.Err == nil && e.Attempts <= 1 {
				return
			}
			lg := logger(l)
			msg, lvl := "retry: succeeded", level
			switch {
			case e.Err == nil:
				lvl = min(level, slog.LevelInfo)
			case stoppedByContext(ctx, e.Err):
				msg, lvl = "retry: stopped", slog.LevelDebug
			default:
				msg = "retry: gave up"
			}
			if !lg.Enabled(ctx, lvl) {
				return
			}
			attrs := logattrs.Append(ctx, make([]slog.Attr, 0, 7))
			attrs = append(attrs,
				slog.Int("attempts", e.Attempts),
				slog.Duration("elapsed", e.Elapsed))
			if e.Hedges > 0 {
				attrs = append(attrs, slog.Int("hedges", e.Hedges))
			}
			if e.Won > 0 && e.Won != e.Attempts {
				attrs = append(attrs, slog.Int("won", e.Won))
			}
			if e.Err != nil {
				attrs = append(attrs, slog.Any("error", e.Err))
			}
			lg.LogAttrs(ctx, lvl, msg, attrs...)
		},
	}
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

// stoppedByContext reports whether err ended a call because its context,
// ctx, said stop: a call whose context was cancelled, or a Loop whose
// context ended or was about to (its next pause would have passed the
// deadline). What the operation's own error wraps does not count.
func stoppedByContext(ctx context.Context, err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	if errors.Is(e.Cause, context.Canceled) && ctx.Err() != nil {
		return true
	}
	return e.loop && (errors.Is(e.Cause, context.Canceled) || errors.Is(e.Cause, context.DeadlineExceeded))
}
