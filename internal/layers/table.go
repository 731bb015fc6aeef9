package layers

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Modes are the columns of the table, in order.
var Modes = []Mode{Signal, EveryLayer, NoRetry}

// Table is what every scenario measured, for each mode.
type Table struct {
	Down     map[Mode]Sequential
	Outage   map[Mode]Run
	Partial  map[Mode]Run
	Overload map[Mode]Run
	Mid      map[Mode]Run
}

// RunAll runs every scenario in every mode, each on a chain of its own
// started on net, and returns the table. The scenarios run one after
// another, the modes of each at once.
func RunAll(net Net) (Table, error) {
	t := Table{Down: map[Mode]Sequential{}, Outage: map[Mode]Run{}, Partial: map[Mode]Run{}, Overload: map[Mode]Run{}, Mid: map[Mode]Run{}}
	var mu sync.Mutex
	var errs []error
	each := func(run func(Mode) error) {
		var wg sync.WaitGroup
		for _, m := range Modes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := run(m); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	each(func(m Mode) error {
		s, err := LeafDown(net, m)
		mu.Lock()
		t.Down[m] = s
		mu.Unlock()
		return err
	})
	for _, r := range []struct {
		into map[Mode]Run
		run  func(Net, Mode) (Run, error)
	}{{t.Outage, Outage}, {t.Partial, Partial}, {t.Overload, Overload}, {t.Mid, MidRefuses}} {
		each(func(m Mode) error {
			res, err := r.run(net, m)
			mu.Lock()
			r.into[m] = res
			mu.Unlock()
			return err
		})
	}
	if len(errs) > 0 {
		return t, errs[0]
	}
	return t, nil
}

// String renders the table in Markdown, a column for each mode and one for
// the goal.
func (t Table) String() string {
	var b strings.Builder
	b.WriteString("| scenario |")
	for _, m := range Modes {
		fmt.Fprintf(&b, " %v |", m)
	}
	b.WriteString(" goal |\n|---|---|---|---|---|\n")
	row := func(name, goal string, cell func(Mode) string) {
		fmt.Fprintf(&b, "| %s |", name)
		for _, m := range Modes {
			fmt.Fprintf(&b, " %s |", cell(m))
		}
		fmt.Fprintf(&b, " %s |\n", goal)
	}
	row("leaf down: leaf attempts per user request, most / mean of the first 20", "≤ 10 / ≤ 5", func(m Mode) string {
		return fmt.Sprintf("%d / %.2f", t.Down[m].Max(), t.Down[m].Mean())
	})
	row("leaf down: time to a definite answer, p99 of the first 20", "≤ half of every layer", func(m Mode) string {
		return t.Down[m].P99().Round(time.Millisecond).String()
	})
	row("leaf down 10 s, then back: failed requests started after its return; last failure after it", "0; ≤ 1s", func(m Mode) string {
		return fmt.Sprintf("%d; %v", t.Outage[m].FailedFrom(OutageReturn), t.Outage[m].LastFailure(OutageReturn).Round(time.Millisecond))
	})
	row("leaf fails 33 % at random: user success", "≥ every layer − 0.1 pp", func(m Mode) string {
		return fmt.Sprintf("%.2f %%", 100*t.Partial[m].Success())
	})
	row("leaf overloaded for 5 s: recovery after it ends", "≤ no retry + 1s", func(m Mode) string {
		return t.Overload[m].Recovered(OverloadEnd).String()
	})
	row("mid drops connections for 2 s: user success", "≥ every layer − 0.5 pp", func(m Mode) string {
		return fmt.Sprintf("%.2f %%", 100*t.Mid[m].Success())
	})
	return b.String()
}
