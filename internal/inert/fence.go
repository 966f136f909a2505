package inert

import "strings"

// Fence quotes text as a fenced block that the text cannot close: the fence is longer than any run of
// backticks in it.
func Fence(info, s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	return f + info + "\n" + s + "\n" + f
}
