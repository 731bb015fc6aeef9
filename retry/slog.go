package retry

import (
	"context"
	"log/slog"
)

// SlogHooks returns hooks that log to l: one record at level for each retry
// (attempt, delay, elapsed, error), none after the final attempt, and one at
// the end of a call that retried or failed ("retry: gave up" or
// "retry: succeeded"); a first-try success logs nothing. A nil l logs to
// slog.Default(). The hooks are safe for concurrent use.
func SlogHooks(l *slog.Logger, level slog.Level) *Hooks {
	return &Hooks{
		OnRetry: func(e RetryEvent) {
			lg := logger(l)
			if !lg.Enabled(context.Background(), level) {
				return
			}
			attrs := []slog.Attr{
				slog.Int("attempt", e.Attempt),
				slog.Duration("delay", e.Delay),
				slog.Duration("elapsed", e.Elapsed),
			}
			if e.Err != nil {
				attrs = append(attrs, slog.String("error", e.Err.Error()))
			}
			if e.Hinted {
				attrs = append(attrs, slog.Bool("hinted", true))
			}
			if e.Reset {
				attrs = append(attrs, slog.Bool("reset", true))
			}
			lg.LogAttrs(context.Background(), level, "retry: waiting", attrs...)
		},
		OnDone: func(e DoneEvent) {
			if e.Err == nil && e.Attempts <= 1 {
				return
			}
			lg := logger(l)
			msg, attrs := "retry: succeeded", []slog.Attr{
				slog.Int("attempts", e.Attempts),
				slog.Duration("elapsed", e.Elapsed),
			}
			if e.Err != nil {
				msg = "retry: gave up"
				attrs = append(attrs, slog.String("error", e.Err.Error()))
			}
			lg.LogAttrs(context.Background(), level, msg, attrs...)
		},
	}
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
