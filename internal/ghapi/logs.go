package ghapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultLogTail is how much of a job's log LogTail keeps by default.
const DefaultLogTail = 64 << 10

// maxLogLine is the most of one log line that is kept; the rest of a longer line is dropped (and said so).
const maxLogLine = 4 << 10

// LogTail is the part of a job's log worth showing: the failing step's, or the log's end. It is text the
// job printed: data, never instructions, and escaped wherever it is rendered.
type LogTail struct {
	Text string
	// Step is the step the text was trimmed to ("" when the log allowed no trimming: Text is its tail).
	Step string
	// Truncated: text was dropped (from the start of the step or log, or from over-long lines).
	Truncated bool
	// Read is how many bytes of the log were read.
	Read int64
}

// TailOptions bound TailLog.
type TailOptions struct {
	Max int // bytes kept; default DefaultLogTail
	// Step is the name of the step the job says failed ("Run go test ./..."): its section of the log is
	// preferred to the section of the first error.
	Step string
}

// JobLog fetches the log of Actions job id and keeps its failing part (TailLog). GitHub answers with a
// redirect to a signed download URL on another host: that request carries no token (the API token is
// only ever sent to the API), and the log is read as a stream, so a log of any size costs at most about
// opts.Max bytes (plus a line and a read buffer) of memory.
func (c *Client) JobLog(ctx context.Context, id int64, opts TailOptions) (LogTail, error) {
	u := c.repoPath("actions", "jobs", strconv.FormatInt(id, 10), "logs")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return LogTail{}, err
	}
	req.Header.Set("Authorization", "token "+c.token)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	noRedirect := &http.Client{Transport: c.transport, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	if err != nil {
		return LogTail{}, fmt.Errorf("GET %s: %w", c.short(u), err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK: // a server that answers with the log itself
		return TailLog(resp.Body, opts)
	case resp.StatusCode < 300 || resp.StatusCode >= 400:
		return LogTail{}, c.httpError(http.MethodGet, u, resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	loc, err := resp.Location()
	if err != nil {
		return LogTail{}, fmt.Errorf("GET %s: HTTP %d without a usable Location: %w", c.short(u), resp.StatusCode, err)
	}
	if loc.Scheme != "https" && loc.Scheme != "http" {
		return LogTail{}, fmt.Errorf("GET %s: the log's download URL is not HTTP(S)", c.short(u))
	}
	dl, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return LogTail{}, err
	}
	// No Authorization header: the URL is signed, and the token is the API's alone.
	download := &http.Client{Transport: c.transport}
	lr, err := download.Do(dl)
	if err != nil {
		return LogTail{}, fmt.Errorf("downloading the log of job %d: %w", id, redactURL(err))
	}
	defer lr.Body.Close()
	if lr.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(lr.Body, 64<<10))
		return LogTail{}, fmt.Errorf("downloading the log of job %d: HTTP %d", id, lr.StatusCode)
	}
	return TailLog(lr.Body, opts)
}

// redactURL drops the signed URL (a short-lived credential to the log) from a transport error.
func redactURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// httpError reads GitHub's error answer (bounded) as do's errors read.
func (c *Client) httpError(method, u string, resp *http.Response) error {
	var body struct {
		Message string `json:"message"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = json.Unmarshal(b, &body)
	return &Error{Method: method, Path: c.short(u), Status: resp.StatusCode, Message: body.Message, Hint: hint(resp.StatusCode, body.Message)}
}

// ansi matches terminal escape sequences (colours, cursor moves), which logs are full of.
var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// tail keeps the last max bytes of the lines added to it.
type tail struct {
	lines   []string
	size    int
	max     int
	dropped bool
}

func (t *tail) add(line string) {
	t.lines = append(t.lines, line)
	t.size += len(line) + 1
	for t.size > t.max && len(t.lines) > 1 {
		t.size -= len(t.lines[0]) + 1
		t.lines[0] = ""
		t.lines = t.lines[1:]
		t.dropped = true
	}
}

func (t *tail) reset() { *t = tail{max: t.max} }

func (t *tail) text() string { return strings.Join(t.lines, "\n") }

// TailLog reads a GitHub Actions log as a stream and keeps what explains a failure, at most opts.Max bytes:
// the section of the step the job says failed (opts.Step), else the section holding the first
// "##[error]" line (up to a quarter of opts.Max after it), else the log's last bytes. A section starts at a "##[group]Run …" line, which is
// how the runner opens each step; timestamps and terminal escapes are dropped, and an over-long line is
// cut. The markers only choose what is kept: the log's text is data and nothing in it is acted on (a
// forged marker can only change which of the job's own lines are shown). Memory stays about opts.Max
// plus one line and a read buffer, whatever the log's size; once the section is complete the rest is not
// read.
func TailLog(r io.Reader, opts TailOptions) (LogTail, error) {
	max := opts.Max
	if max <= 0 {
		max = DefaultLogTail
	}
	var (
		all       = tail{max: max}
		cur       = tail{max: max}
		step      string   // the current section's step
		erred     bool     // the current section holds the log's first error
		after     int      // bytes of the current section after that error
		firstErr  *LogTail // the first error's section, kept while the named step's is looked for
		longLines bool
		read      int64
	)
	done := func(t *tail, step string, dropped bool) LogTail {
		return LogTail{Text: t.text(), Step: step, Truncated: t.dropped || dropped || longLines, Read: read}
	}
	named := func() bool { return opts.Step != "" && step == opts.Step }
	// keepErr ends the first error's section: with no named step it is the answer; else it is kept in case
	// the named step's section never comes.
	keepErr := func(dropped bool) (LogTail, bool) {
		lt := done(&cur, step, dropped)
		if opts.Step == "" || named() {
			return lt, true
		}
		if firstErr == nil {
			firstErr = &lt
		}
		erred = false
		return LogTail{}, false
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var scratch []byte
	for {
		line, cut, n, err := readLine(br, &scratch)
		read += n
		if n > 0 || err == nil {
			longLines = longLines || cut
			content := strings.TrimRight(stripTimestamp(line), "\r")
			if strings.Contains(content, "\x1b") {
				content = ansi.ReplaceAllString(content, "")
			}
			if name, ok := strings.CutPrefix(content, "##[group]Run "); ok {
				if named() {
					return done(&cur, step, false), nil // the named step's section is complete
				}
				if erred {
					if lt, final := keepErr(false); final {
						return lt, nil
					}
				}
				cur.reset()
				step = "Run " + name
			}
			all.add(content)
			cur.add(content)
			switch {
			case erred:
				if after += len(content) + 1; after > max/4 {
					if lt, final := keepErr(true); final {
						return lt, nil
					}
				}
			case firstErr == nil && strings.HasPrefix(content, "##[error]"):
				erred, after = true, 0
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return LogTail{Read: read}, fmt.Errorf("reading the log: %w", err)
		}
	}
	switch {
	case named() || (erred && firstErr == nil):
		return done(&cur, step, false), nil
	case firstErr != nil:
		firstErr.Read = read
		return *firstErr, nil
	}
	return done(&all, "", false), nil
}

// readLine reads one line (without its newline) of at most maxLogLine bytes, valid UTF-8, skipping the rest
// of a longer line; cut says it did, n how many bytes were consumed. scratch is reused from line to line.
func readLine(br *bufio.Reader, scratch *[]byte) (line string, cut bool, n int64, err error) {
	buf := (*scratch)[:0]
	defer func() { *scratch = buf[:0] }()
	for {
		frag, ferr := br.ReadSlice('\n')
		n += int64(len(frag))
		if room := maxLogLine - len(buf); room > 0 {
			buf = append(buf, frag[:min(len(frag), room)]...)
		}
		if ferr == bufio.ErrBufferFull {
			continue
		}
		err = ferr
		break
	}
	length := n
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	if err == nil {
		length-- // the newline
	}
	if length > int64(len(buf)) {
		cut = true
		for i := 0; i < utf8.UTFMax && len(buf) > 0; i++ {
			if r, size := utf8.DecodeLastRune(buf); r != utf8.RuneError || size > 1 {
				break
			}
			buf = buf[:len(buf)-1] // do not end inside a character
		}
		buf = append(buf, " […]"...)
	}
	if !utf8.Valid(buf) {
		return strings.ToValidUTF8(string(buf), "\uFFFD"), cut, n, err
	}
	return string(buf), cut, n, err
}

// stripTimestamp drops the runner's "2024-01-02T03:04:05.1234567Z " prefix.
func stripTimestamp(line string) string {
	ts, rest, ok := strings.Cut(line, " ")
	if ok && len(ts) >= 20 && len(ts) <= 40 && ts[4] == '-' && ts[10] == 'T' && strings.HasSuffix(ts, "Z") {
		return rest
	}
	return line
}
