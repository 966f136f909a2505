package inert

import (
	"regexp"
	"strings"
)

// GitHub acts on what it finds in the text of pull requests, commits and comments: `fixes #2` (or `GH-2`,
// `owner/repo#2`, an issue's URL) closes issue 2 when the change is merged, any of them links the two,
// `@name` notifies someone, and `name@host.example` is a mailto: link. An issue's title is chosen by
// whoever opened the issue, so text ralph quotes from an issue must not be able to do any of that. GitHub
// swaps the one character that makes each such reference for its full-width twin, which reads the same and
// which GitHub does not parse.
var (
	issueNumberRef = regexp.MustCompile(`#(\d)`)
	ghNumberRef    = regexp.MustCompile(`(?i)\b(gh)-(\d)`)
	// Any "@" before a word's character: after a space it is a mention, after one (mona@example.com) an
	// e-mail address, which GitHub makes a mailto: link.
	mentionRef = regexp.MustCompile(`@(\w)`)
	schemeRef  = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*):(//)`)
	// A link needs no scheme: "[text](//host/…)", "[text](page)", a definition "[text]: //host/…", a
	// reference "[text][ref]", and GitHub's autolink of "www.host".
	linkRef = regexp.MustCompile(`\]([(:\[])`)
	wwwRef  = regexp.MustCompile(`(?i)\b(www)\.`)
	// A character reference is its character once rendered: "&commat;mona" and "&#x40;mona" mention, as
	// "&num;2" references, in a comment or a body.
	charRef = regexp.MustCompile(`&(#?[A-Za-z0-9]+;)`)
)

// GitHub makes text that is not ralph's (an issue's title, a phase's title, a failure's reason that names a
// file, a person's reason, a model's name) safe to quote on one line where GitHub acts on what it reads: no
// closing keyword for another issue, no cross-reference, no @-mention, no link (with a scheme or without:
// "[text](//host)", "www.host"), no character reference and no HTML (so no hidden
// comment, and none of ralph's markers) survive in it. ralph writes the one closing keyword it means, for the
// issue itself, around such text.
func GitHub(s string) string {
	// One line: a title that broke a commit's subject would make the rest of it the message's body.
	s = strings.NewReplacer("\r", " ", "\n", " ", "\t", " ").Replace(s)
	// No control character (an escape sequence in a commit's subject reaches the terminal of whoever runs
	// git log; a NUL no program argument can hold) and nothing that reorders what follows it: shown as the
	// terminal filter shows them (^[, <U+202E>), before "<" is made harmless below.
	s = String(s)
	s = strings.ReplaceAll(s, "<", "\uFF1C")    // ＜: no tag at all
	s = linkRef.ReplaceAllString(s, "\uFF3D$1") // ［text］(…): no link
	s = wwwRef.ReplaceAllString(s, "$1\uFF0E")  // www．host
	return GitHubText(s)
}

// GitHubText is GitHub for text of several lines (a document, the tail of a command's output): its lines are
// kept, and so is its HTML, but for comments (which would hide text from a reader, or pass for a marker).
func GitHubText(s string) string {
	s = charRef.ReplaceAllString(s, "\uFF06$1")        // ＆commat;
	s = issueNumberRef.ReplaceAllString(s, "\uFF03$1") // ＃2
	s = ghNumberRef.ReplaceAllString(s, "$1\u2011$2")  // GH‑2, a non-breaking hyphen
	s = mentionRef.ReplaceAllString(s, "\uFF20$1")     // ＠name, mona＠example.com
	s = schemeRef.ReplaceAllString(s, "$1\uFF1A$2")    // https：//…
	return Unmarked(s)
}

// Unmarked makes sure no text in a body ralph composed can pass for one of ralph's markers or hide from a
// reader: an HTML comment is written with a full-width "<". ralph adds its own marker after this, at the
// body's fixed start or end, so the one marker a comment of ralph's holds is the one ralph put there.
func Unmarked(s string) string {
	return strings.ReplaceAll(s, "<!--", "\uFF1C!--")
}

// safeURL is what a link target of ralph's may hold: an http(s) URL of the characters GitHub's own URLs are
// made of, none of which can end a Markdown link, open a tag or a comment, or start a line.
var safeURL = regexp.MustCompile(`^https?://[A-Za-z0-9._~:/?#\[\]@!$&*+,;=%-]+$`)

// Link is a URL ralph was told (GitHub's answer, the runner's environment) as the target of a Markdown link:
// as it is when it is a plain http(s) URL, and otherwise quoted inert, so that it links nowhere.
func Link(u string) string {
	if safeURL.MatchString(u) && !strings.Contains(u, "<!--") {
		return u
	}
	return GitHub(u)
}

// Code writes a name ralph made (a branch, a document's path: its slug is [a-z0-9-], checked when the
// record is read) as itself in a code span, where GitHub makes no reference of it, so that a copied path
// exists: GitHub's look-alikes (GH‑0001) would not. A name that could leave the span is made inert instead.
func Code(s string) string {
	if strings.ContainsAny(s, "`\r\n<>") || strings.TrimSpace(s) != s {
		return "`" + CodeText(s) + "`"
	}
	return "`" + s + "`"
}

// CodeText is text of others (an error, a host, a check's or a command's name) made to stand inside a code
// span that the caller writes around it: inert for GitHub (GitHub), and with its backticks, which would end
// the span, as quotes.
func CodeText(s string) string { return strings.ReplaceAll(GitHub(s), "`", "'") }
