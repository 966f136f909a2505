#!/bin/sh
# A scripted agent that follows ralph's agent protocol, for the end-to-end tests.
# It logs each invocation to $RALPH_TEST_CONTROL/invocations, keeps each prompt, and answers from
# control files the test writes: verdict (review), self_verdict (self-review), decision (triage), and
# sleep (seconds to work before answering: a slow agent). Its pid goes to agent.pid first, so that a test
# can kill its process group, and its uid to agent.uid, so that the harness can check who it runs as.
set -eu
# Each run of ralph gives its agent a user of its own: files here must stay writable by the next one.
umask 000
ctl="$RALPH_TEST_CONTROL"
echo $$ > "$ctl/agent.pid"
id -u > "$ctl/agent.uid"
echo "$RALPH_COMMAND $RALPH_ISSUE ${RALPH_PHASE:-} ${RALPH_PHASES:-}" >> "$ctl/invocations"
count=$(wc -l < "$ctl/invocations" | tr -d ' ')
# Not cp, which gives the copy the prompt file's mode (0644): the agent of a run at the same time, another
# user, may count the same invocation and must be able to write over it.
cat "$RALPH_PROMPT_FILE" > "$ctl/prompt-$count-$RALPH_COMMAND.md"
# The prompt must also arrive on standard input.
cat > "$ctl/stdin-$count"
echo "agent: working on $RALPH_COMMAND for #$RALPH_ISSUE"
if [ -f "$ctl/sleep" ]; then sleep "$(cat "$ctl/sleep")"; fi
case "$RALPH_COMMAND" in
research)
  printf '# Research: scripted\n\nThe code lives in README.md.\n' > "$RALPH_ARTIFACT" ;;
plan)
  phases=$(cat "$ctl/phases" 2>/dev/null || echo 2)
  if [ -f "$ctl/plan_without_phases" ]; then
    printf '# Plan\n\nJust do it.\n' > "$RALPH_ARTIFACT"
    exit 0
  fi
  {
    printf '# Plan: scripted\n\nTwo small steps.\n\n'
    i=1
    while [ "$i" -le "$phases" ]; do
      printf '## Phase %s: Step %s\n\nWrite feature-%s.txt.\n\n' "$i" "$i" "$i"
      i=$((i + 1))
    done
  } > "$RALPH_ARTIFACT" ;;
review)
  verdict=$(cat "$ctl/verdict" 2>/dev/null || echo APPROVED)
  if [ "$verdict" = NONE ]; then
    printf '# Review\n\nI have opinions but no verdict.\n' > "$RALPH_ARTIFACT"
  else
    printf '# Review\n\nLooks fine.\n\nVERDICT: %s\n' "$verdict" > "$RALPH_ARTIFACT"
  fi ;;
implement|fix)
  echo "phase $RALPH_PHASE of $RALPH_PHASES" > "feature-$RALPH_PHASE.txt"
  # Extra shell the test wants the agent to run in the worktree (an attempt to break a rule).
  if [ -f "$ctl/implement_extra" ]; then sh "$ctl/implement_extra"; fi ;;
self-review)
  printf '# Self-review\n\nVERDICT: %s\n' "$(cat "$ctl/self_verdict" 2>/dev/null || echo APPROVED)" > "$RALPH_ARTIFACT" ;;
triage)
  # triage-N: the whole triage document for issue N (a split, say); else the decision in "decision".
  if [ -f "$ctl/triage-$RALPH_ISSUE" ]; then
    cp "$ctl/triage-$RALPH_ISSUE" "$RALPH_ARTIFACT"
  else
    printf 'Clear enough.\n\nDECISION: %s\n' "$(cat "$ctl/decision" 2>/dev/null || echo plan)" > "$RALPH_ARTIFACT"
  fi ;;
*)
  echo "unknown command $RALPH_COMMAND" >&2; exit 2 ;;
esac
# Extra shell the test wants the agent to run after any command (extra_research, extra_plan, …): a hostile
# agent's attempt at something.
if [ -f "$ctl/extra_$RALPH_COMMAND" ]; then sh "$ctl/extra_$RALPH_COMMAND"; fi
