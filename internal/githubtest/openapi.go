package githubtest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// The description is trimmed by testdata/update.sh to the path families ralph uses
// (with every component they reference), because the whole one takes seconds to load.
//
//go:embed testdata/api.github.com.ralph.openapi.json.gz
var openapiGz []byte

// Every operation of GitHub's whole description, to tell an endpoint GitHub lacks
// from one the trimmed description left out.
//
//go:embed testdata/operations.txt
var operationsTxt string

// spec is the REST description, loaded once per process: even trimmed it is large.
type spec struct {
	doc    *openapi3.T
	router routers.Router
	multi  []multiSegment
}

// multiSegment is a path template with a parameter that may hold slashes (marked
// x-multi-segment in GitHub's description, like a git ref).
type multiSegment struct {
	segments []string // template segments
	index    int      // the multi-segment parameter's segment
}

var loadSpec = sync.OnceValues(func() (*spec, error) { return newSpec(nil) })

// newSpec loads the description, letting edit change it before it is routed.
func newSpec(edit func(*openapi3.T)) (*spec, error) {
	zr, err := gzip.NewReader(bytes.NewReader(openapiGz))
	if err != nil {
		return nil, fmt.Errorf("read openapi description: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("read openapi description: %w", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load openapi description: %w", err)
	}
	// Routes would match only https://api.github.com; "/" matches any host, so
	// both github.com-style and Enterprise-style (prefix stripped) servers work.
	doc.Servers = openapi3.Servers{{URL: "/"}}
	if edit != nil {
		edit(doc)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route openapi description: %w", err)
	}
	return &spec{doc: doc, router: router, multi: multiSegments(doc)}, nil
}

func multiSegments(doc *openapi3.T) []multiSegment {
	var out []multiSegment
	for path, item := range doc.Paths.Map() {
		names := map[string]bool{}
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value != nil && p.Value.In == openapi3.ParameterInPath && p.Value.Extensions["x-multi-segment"] == true {
					names[p.Value.Name] = true
				}
			}
		}
		segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
		for i, seg := range segs {
			if strings.HasPrefix(seg, "{") && names[strings.Trim(seg, "{}")] {
				out = append(out, multiSegment{segments: segs, index: i})
			}
		}
	}
	// Most specific first: more literal segments after the parameter.
	sort.Slice(out, func(i, j int) bool {
		ti, tj := len(out[i].segments)-out[i].index, len(out[j].segments)-out[j].index
		if ti != tj {
			return ti > tj
		}
		return strings.Join(out[i].segments, "/") < strings.Join(out[j].segments, "/")
	})
	return out
}

// rejection is a request GitHub's description (or this server's stricter reading
// of it) does not accept.
type rejection struct {
	status  int
	message string
}

func (r *rejection) Error() string { return r.message }

// route finds the operation of a request whose path has the API prefix removed.
//
// A parameter that may contain slashes (a git ref such as heads/ralph/47-x, a branch
// name) is matched by the router only %2F-escaped, while GitHub accepts it either way.
// So when the path as sent matches nothing, the segments that fall on such a
// parameter are joined with %2F and the path is tried again: both forms work, and the
// handler sees the unescaped value.
func (sp *spec) route(method, escapedPath string) (*routers.Route, map[string]string, error) {
	route, params, err := sp.find(method, escapedPath)
	if !errors.Is(err, routers.ErrPathNotFound) {
		return route, params, err
	}
	segs := strings.Split(strings.TrimPrefix(escapedPath, "/"), "/")
	for _, m := range sp.multi {
		tail := len(m.segments) - m.index - 1
		if len(segs) <= len(m.segments) || !matchSegments(m.segments[:m.index], segs[:m.index]) ||
			!matchSegments(m.segments[m.index+1:], segs[len(segs)-tail:]) {
			continue
		}
		joined := slices.Concat(segs[:m.index], []string{strings.Join(segs[m.index:len(segs)-tail], "%2F")}, segs[len(segs)-tail:])
		route, params, jerr := sp.find(method, "/"+strings.Join(joined, "/"))
		switch {
		case jerr == nil:
			return route, params, nil
		case errors.Is(jerr, routers.ErrMethodNotAllowed):
			err = jerr
		}
	}
	return nil, nil, err
}

func matchSegments(template, segs []string) bool {
	for i, t := range template {
		if !strings.HasPrefix(t, "{") && t != segs[i] {
			return false
		}
	}
	return true
}

func (sp *spec) find(method, escapedPath string) (*routers.Route, map[string]string, error) {
	u := &url.URL{Path: "/", RawPath: escapedPath}
	if p, err := url.PathUnescape(escapedPath); err == nil {
		u.Path = p
	}
	route, params, err := sp.router.FindRoute(&http.Request{Method: method, URL: u})
	if err != nil {
		return nil, nil, err
	}
	for k, v := range params {
		if p, err := url.PathUnescape(v); err == nil {
			params[k] = p
		}
	}
	return route, params, nil
}

// check validates r (whose URL path has the API prefix removed) against GitHub's
// description. It answers the operation's path template, its path parameters
// (unescaped), and the decoded JSON body (nil without one).
//
// Stricter than GitHub in two ways, on purpose: an unknown query parameter and an
// unknown property in a JSON body object (where the schema lists the properties and
// does not allow others explicitly) are rejected. GitHub ignores both silently, which
// is how a misspelled name in a client goes unnoticed.
func (sp *spec) check(r *http.Request, escapedPath string) (*routers.Route, map[string]string, any, error) {
	route, params, err := sp.route(r.Method, escapedPath)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return nil, nil, nil, &rejection{http.StatusNotFound, fmt.Sprintf(
			"GitHub's REST API has no %s operation on this path (its OpenAPI description has %s %s)",
			r.Method, strings.Join(sp.methods(escapedPath), ", "), sp.template(escapedPath))}
	case err != nil:
		return nil, nil, nil, &rejection{http.StatusNotFound, unknownPath(r.Method, escapedPath)}
	}

	var body []byte
	if r.Body != nil {
		body, err = io.ReadAll(r.Body)
		if err != nil {
			return nil, nil, nil, &rejection{http.StatusBadRequest, "read request body: " + err.Error()}
		}
	}
	var value any
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &value); err != nil {
			return nil, nil, nil, &rejection{http.StatusBadRequest, "Problems parsing JSON: " + err.Error()}
		}
	}

	vr := r.Clone(r.Context())
	vr.URL = &url.URL{Path: route.Path, RawQuery: r.URL.RawQuery}
	vr.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > 0 && vr.Header.Get("Content-Type") == "" {
		// GitHub reads a body as JSON whatever its content type; so do we.
		vr.Header.Set("Content-Type", "application/json")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		vr.Body = http.NoBody
		vr.ContentLength = 0
	}
	opts := &openapi3filter.Options{
		MultiError:                        true,
		SkipSettingDefaults:               true,
		RejectWhenRequestBodyNotSpecified: true,
	}
	opts.WithCustomSchemaErrorFunc(schemaMessage)
	in := &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return nil, nil, nil, &rejection{http.StatusUnprocessableEntity, fmt.Sprintf(
			"Invalid request for %s %s: %s", r.Method, route.Path, validationMessage(err))}
	}

	var problems []string
	for name := range r.URL.Query() {
		if queryParameter(route, name) == nil {
			problems = append(problems, fmt.Sprintf("query parameter %q is not in GitHub's description of this operation", name))
		}
	}
	if value != nil && route.Operation.RequestBody != nil && route.Operation.RequestBody.Value != nil {
		if mt := route.Operation.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			for _, f := range unknownFields(mt.Schema.Value, value, "") {
				problems = append(problems, fmt.Sprintf("body property %q is not in GitHub's schema for this operation", f))
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, nil, nil, &rejection{http.StatusUnprocessableEntity, fmt.Sprintf(
			"Invalid request for %s %s: %s", r.Method, route.Path, strings.Join(problems, "; "))}
	}
	return route, params, value, nil
}

// schemaMessage is a schema error without the schema, which kin-openapi prints whole.
func schemaMessage(err *openapi3.SchemaError) string {
	if p := err.JSONPointer(); len(p) > 0 {
		return fmt.Sprintf("at /%s: %s", strings.Join(p, "/"), err.Reason)
	}
	return err.Reason
}

func validationMessage(err error) string {
	var me openapi3.MultiError
	if errors.As(err, &me) {
		msgs := make([]string, 0, len(me))
		for _, e := range me {
			msgs = append(msgs, validationMessage(e))
		}
		return strings.Join(msgs, "; ")
	}
	return err.Error()
}

func queryParameter(route *routers.Route, name string) *openapi3.Parameter {
	for _, params := range []openapi3.Parameters{route.Operation.Parameters, route.PathItem.Parameters} {
		if p := params.GetByInAndName(openapi3.ParameterInQuery, name); p != nil {
			return p
		}
	}
	return nil
}

// unknownFields lists the properties of value, an object decoded from JSON, that
// schema does not declare (as JSON pointers). A schema that declares no properties,
// or allows additional ones explicitly, accepts any.
func unknownFields(schema *openapi3.Schema, value any, at string) []string {
	if schema == nil {
		return nil
	}
	if alts := append(slices.Clone(schema.OneOf), schema.AnyOf...); len(alts) > 0 {
		var first []string
		matched := false
		for _, alt := range alts {
			if alt.Value == nil || alt.Value.VisitJSON(value) != nil {
				continue
			}
			unknown := unknownFields(alt.Value, value, at)
			if len(unknown) == 0 {
				return nil
			}
			if !matched {
				first, matched = unknown, true
			}
		}
		return first
	}
	switch v := value.(type) {
	case []any:
		if schema.Items == nil {
			return nil
		}
		var out []string
		for i, item := range v {
			out = append(out, unknownFields(schema.Items.Value, item, fmt.Sprintf("%s/%d", at, i))...)
		}
		return out
	case map[string]any:
		props := map[string]*openapi3.SchemaRef{}
		for _, s := range append([]*openapi3.SchemaRef{{Value: schema}}, schema.AllOf...) {
			if s.Value == nil {
				continue
			}
			for k, p := range s.Value.Properties {
				props[k] = p
			}
		}
		open := len(props) == 0 || schema.AdditionalProperties.Schema != nil ||
			(schema.AdditionalProperties.Has != nil && *schema.AdditionalProperties.Has)
		var out []string
		for k, item := range v {
			p, ok := props[k]
			switch {
			case ok && p.Value != nil:
				out = append(out, unknownFields(p.Value, item, at+"/"+k)...)
			case !ok && !open:
				out = append(out, at+"/"+k)
			}
		}
		sort.Strings(out)
		return out
	}
	return nil
}

// methods lists the operations the description has on the path template that
// matches escapedPath with any method.
func (sp *spec) methods(escapedPath string) []string {
	var out []string
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if _, _, err := sp.route(m, escapedPath); err == nil {
			out = append(out, m)
		}
	}
	return out
}

func (sp *spec) template(escapedPath string) string {
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		if route, _, err := sp.route(m, escapedPath); err == nil {
			return route.Path
		}
	}
	return escapedPath
}

// operation is one line of operations.txt.
type operation struct {
	method, path string
	re           *regexp.Regexp
}

var loadOperations = sync.OnceValue(func() []operation {
	var out []operation
	sc := bufio.NewScanner(strings.NewReader(operationsTxt))
	param := regexp.MustCompile(`\\\{[^}]*\\\}`)
	for sc.Scan() {
		method, path, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(method, "#") {
			continue
		}
		expr := param.ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`)
		out = append(out, operation{method, path, regexp.MustCompile("^" + expr + "$")})
	}
	return out
})

// unknownPath explains why no operation of the (trimmed) description matched.
func unknownPath(method, escapedPath string) string {
	var sameMethod, otherMethods []string
	for _, op := range loadOperations() {
		if op.re.MatchString(escapedPath) {
			if op.method == method {
				sameMethod = append(sameMethod, op.path)
			} else {
				otherMethods = append(otherMethods, op.method+" "+op.path)
			}
		}
	}
	switch {
	case len(sameMethod) > 0:
		return fmt.Sprintf("%s %s is GitHub's %s %s, which the test server's trimmed OpenAPI description leaves out: "+
			"add its path to KEEP in internal/githubtest/testdata/update.sh", method, escapedPath, method, sameMethod[0])
	case len(otherMethods) > 0:
		return fmt.Sprintf("GitHub's REST API has no %s operation on %s (it has %s)", method, escapedPath, strings.Join(otherMethods, ", "))
	}
	return fmt.Sprintf("GitHub's REST API has no operation %s %s (no path in its OpenAPI description matches)", method, escapedPath)
}
