// Package plantext reads and writes the text of the agent's documents that ralph acts on: a plan's phases
// and a triage's split into sub-issues, with the bounds ralph holds them to and the body (ending with
// ralph's parent marker) of a sub-issue it opens. It is pure text work: no I/O.
package plantext
