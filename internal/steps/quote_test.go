package steps

import (
	"regexp"
	"testing"
)

// reference is what GitHub links or acts on in a pull request, a commit message or a comment: an issue
// number (#2, GH-2, owner/repo#2), an issue's URL, an @-mention.
var reference = regexp.MustCompile(`(?i)#\d|\bGH-\d|(^|\W)@\w|https?://`)

func TestInert(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Add a greeting", "Add a greeting"},
		{"Add a greeting, fixes #2", "Add a greeting, fixes ＃2"},
		{"closes octo/demo#12 and resolves GH-7", "closes octo/demo＃12 and resolves GH‑7"},
		{"Fixes https://github.com/octo/demo/issues/2", "Fixes https：//github.com/octo/demo/issues/2"},
		{"cc @mona and @octo/team, and mona@example.com", "cc ＠mona and ＠octo/team, and mona＠example.com"},
		{"(@mona) @@hubot", "(＠mona) @＠hubot"},
		{"C# and #hashtag stay", "C# and #hashtag stay"},
		{"&commat;mona &#x40;x &num;2, R&D &amp", "＆commat;mona ＆#x40;x ＆num;2, R&D &amp"},
		{"two\nlines\r", "two lines "},
		// No control character, nor what reorders the text after it: a commit's subject is shown raw by
		// git log on a person's terminal.
		{"title\x1b]0;pwned\x07\x1b[2J end", "title^[]0;pwned^G^[[2J end"},
		{"nul\x00 and tab\t and del\x7f and \u009b", "nul^@ and tab  and del^? and ^[["},
		{"fix \u202etxt.exe", "fix ＜U+202E>txt.exe"},
	}
	for _, tt := range tests {
		got := Inert(tt.in)
		if got != tt.want {
			t.Errorf("Inert(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if m := reference.FindString(got); m != "" {
			t.Errorf("Inert(%q) = %q still holds a reference: %q", tt.in, got, m)
		}
	}
}

// TestInertFormsNoLink: text quoted on one line forms no link of any kind, not only one with a scheme: an
// inline link or image to a protocol-relative or relative address, a link reference definition (which a
// list item of ralph's may start with) and GitHub's www. autolink.
func TestInertFormsNoLink(t *testing.T) {
	t.Parallel()
	link := regexp.MustCompile(`(?i)\][(:\[]|(^|[\s*_~(])www\.`)
	for _, in := range []string{
		"Fix login, see [the details](//evil.example/login)",
		"Fix login ![x]( //evil.example/a.png)",
		"[the details](evil.example/login)",
		"[docs]: //evil.example/login",
		"[docs][1] and [1]",
		"see www.evil.example/login or (WWW.evil.example)",
	} {
		if got := Inert(in); link.MatchString(got) {
			t.Errorf("Inert(%q) = %q still forms a link: %q", in, got, link.FindString(got))
		}
	}
}
