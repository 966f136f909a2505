package config

import (
	"fmt"
	"strings"
)

// What a config error says of a key ralph does not know: the keys it does, and the one it was likely meant to be.

func unknownKey(key, section string, known []string) string {
	where := "known top-level keys"
	if section != "" {
		where = "known keys under " + section
	}
	list := strings.Join(known, ", ")
	if s := suggest(key, known); s != "" {
		return fmt.Sprintf("unknown key, did you mean %q? (%s: %s)", s, where, list)
	}
	return fmt.Sprintf("unknown key (%s: %s)", where, list)
}

// suggest returns the known key closest to key if it is a likely misspelling:
// within a small edit distance once case is ignored.
func suggest(key string, known []string) string {
	key = strings.ToLower(key)
	best, bestDist := "", -1
	for _, k := range known {
		d := editDistance(key, k)
		// One edit turns a short key into another real word ("max" and
		// "mix"), so short keys get less slack.
		limit := 2
		if len(k) <= 4 {
			limit = 1
		}
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes: keys
// are ASCII.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
