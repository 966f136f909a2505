package workflow

import (
	"fmt"
	"slices"
)

// Declaration is what the workflow knows of one step or command: the state it runs from, the state while
// it runs, the named guard that picks it among the steps of its state, and the states it may move the issue
// to. The engine declares each of its steps (and each person's command) once, beside its behaviour; the
// table of legal moves is derived from those declarations by [NewTable].
type Declaration struct {
	Event Event
	// From is the state the step runs from ("" only for Enroll: the issue was not in the workflow).
	From State
	// Running is the state while the step runs; "" or From when the issue stays in From.
	Running State
	// Guard names what must hold for the step to be the one From calls for ("": nothing).
	Guard string
	// To are the states the step may move the issue to.
	To []State
}

// locks says whether the declaration has a lock state of its own: it is entered by Start and left by Abort.
func (d Declaration) locks() bool { return d.Running != "" && d.Running != d.From }

// Transition is one allowed move. From is "" only for Enroll: the issue was
// not in the workflow before.
type Transition struct {
	From  State
	Event Event
	To    State
}

// Table is the workflow's legal moves, derived from the declarations: each declaration's moves (from its
// lock state when it has one, else from its From), Start into and Abort out of each lock state, and two
// rules, Escalate (from every non-terminal state but Human Needed to Human Needed) and Retry (from Human
// Needed to every state that is neither terminal nor a lock state, nor Human Needed).
type Table struct {
	moves  []Transition
	guards map[Transition]string
}

// NewTable derives the table of legal moves from decls, in their order, the rules last.
func NewTable(decls []Declaration) Table {
	t := Table{guards: map[Transition]string{}}
	add := func(tr Transition, guard string) {
		if !slices.Contains(t.moves, tr) {
			t.moves = append(t.moves, tr)
		}
		if guard != "" {
			t.guards[tr] = guard
		}
	}
	for _, d := range decls {
		where := d.From
		if d.locks() {
			add(Transition{d.From, Start, d.Running}, "")
			add(Transition{d.Running, Abort, d.From}, "")
			where = d.Running
		}
		for _, to := range d.To {
			add(Transition{where, d.Event, to}, d.Guard)
		}
	}
	for _, s := range States() {
		if k := s.Kind(); k != Terminal && s != HumanNeeded {
			add(Transition{s, Escalate, HumanNeeded}, "")
		}
	}
	for _, s := range States() {
		if k := s.Kind(); k != Terminal && k != Lock && s != HumanNeeded {
			add(Transition{HumanNeeded, Retry, s}, "")
		}
	}
	return t
}

// Transitions returns the whole table of allowed moves, in the order of the declarations, the rules last.
// It returns a new slice on every call, so a caller may change it.
func (t Table) Transitions() []Transition { return slices.Clone(t.moves) }

// Guard is the name of the guard under which tr is declared ("": none).
func (t Table) Guard(tr Transition) string { return t.guards[tr] }

// Check returns nil if ev may move an issue from from to to, and a
// *TransitionError otherwise.
func (t Table) Check(from State, ev Event, to State) error {
	if slices.Contains(t.moves, Transition{from, ev, to}) {
		return nil
	}
	return &TransitionError{From: from, Event: ev, To: to}
}

// label is how the diagram names tr: its event, with its guard when it has one.
func (t Table) label(tr Transition) string {
	if g := t.guards[tr]; g != "" {
		return fmt.Sprintf("%s (%s)", tr.Event, g)
	}
	return string(tr.Event)
}
