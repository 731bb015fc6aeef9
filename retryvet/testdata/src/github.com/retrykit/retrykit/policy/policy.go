// Package policy is a stub of retrykit's policy package: the names the
// analyzers know, with their signatures.
package policy

import "time"

type Policy struct{ attempts int }

type Schedule interface{ Delay(n int) time.Duration }

type Guard struct{ tokens float64 }

func Default() Policy                       { return Policy{} }
func Exponential(base time.Duration) Policy { return Policy{} }
func Constant(d time.Duration) Policy       { return Policy{} }
func Custom(s Schedule) Policy              { return Policy{} }
func Parse(s string) (Policy, error)        { return Policy{}, nil }

func NewGuard(tokens, ratio float64) *Guard { return &Guard{tokens: tokens} }

func (p Policy) WithMaxAttempts(n int) Policy              { return p }
func (p Policy) WithMaxElapsed(d time.Duration) Policy     { return p }
func (p Policy) WithCap(d time.Duration) Policy            { return p }
func (p Policy) WithAttemptTimeout(d time.Duration) Policy { return p }
func (p Policy) WithGuard(g *Guard) Policy                 { return p }
