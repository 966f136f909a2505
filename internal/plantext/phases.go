package plantext

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ralph-dev/gh-ralph/internal/config"
	"github.com/ralph-dev/gh-ralph/internal/record"
)

var phaseHeading = regexp.MustCompile(`(?m)^## Phase (\d+): *(.+?)\s*$`)

// ParsePhases reads a plan's "## Phase N: title" headings with their sections; the numbers must run 1..M.
func ParsePhases(plan string) ([]record.Phase, error) {
	locs := phaseHeading.FindAllStringSubmatchIndex(plan, -1)
	if len(locs) == 0 {
		return nil, errors.New("the plan has no `## Phase N: <title>` headings")
	}
	phases := make([]record.Phase, 0, len(locs))
	for i, l := range locs {
		num, _ := strconv.Atoi(plan[l[2]:l[3]])
		if num != i+1 {
			return nil, fmt.Errorf("the plan's phase headings must be numbered 1, 2, 3… in order; heading %d says Phase %d", i+1, num)
		}
		end := len(plan)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		// A section ends at the next heading of level 1 or 2 as well.
		sec := plan[l[0]:end]
		if j := regexp.MustCompile(`(?m)^#{1,2} `).FindAllStringIndex(sec, 2); len(j) == 2 {
			sec = sec[:j[1][0]]
		}
		phases = append(phases, record.Phase{Title: plan[l[4]:l[5]], Text: strings.TrimSpace(sec)})
	}
	return phases, nil
}

// CheckPhases says why ralph will not work through a plan's phases ("" when it will): more than max_phases,
// or a title too long for a commit's subject, or one that holds a control character: the title is an
// argument of ralph's git (the commit's message), which cannot hold a NUL, so such a phase would fail
// every implement run the same way.
func CheckPhases(phases []record.Phase, limit int) string {
	if limit < 1 { // a Config not made by config.Default or Parse
		limit = config.Default().MaxPhases
	}
	limit = min(limit, record.MaxPhasesKept)
	if len(phases) > limit {
		return fmt.Sprintf("The plan has %d phases; a plan may have at most %d (max_phases: %d). No phase was started.", len(phases), limit, limit)
	}
	for i, p := range phases {
		if n := utf8.RuneCountInString(p.Title); n > record.MaxPhaseTitle {
			return fmt.Sprintf("The title of phase %d is %d characters; ralph takes at most %d. No phase was started.", i+1, n, record.MaxPhaseTitle)
		}
		if record.ControlInTitle(p.Title) {
			return fmt.Sprintf("The title of phase %d holds a control character; ralph takes none there. No phase was started.", i+1)
		}
	}
	return ""
}
