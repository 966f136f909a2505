package githubtest

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// GitHub's public GraphQL schema (@octokit/graphql-schema, see testdata/README.md). Every GraphQL document
// the server receives is validated against it before it is executed, so a misspelled field, a wrong argument
// type or an unknown type in a fragment fails here as it would on GitHub.
//
//go:embed testdata/schema.graphql.gz
var schemaGz []byte

var graphQLSchema = sync.OnceValues(loadGraphQLSchema)

// loadGraphQLSchema parses the SDL. gqlparser refuses the published schema as it stands: one field
// (EnterpriseOwnerInfo.repositoryDeployKeySetting) is defined twice, which GitHub's own tooling tolerates.
// The duplicate definitions are identical, so the first one is kept.
func loadGraphQLSchema() (*ast.Schema, error) {
	zr, err := gzip.NewReader(bytes.NewReader(schemaGz))
	if err != nil {
		return nil, fmt.Errorf("graphql schema: %w", err)
	}
	src, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("graphql schema: %w", err)
	}
	doc, err := parser.ParseSchemas(validator.Prelude, &ast.Source{Name: "schema.graphql", Input: string(src)})
	if err != nil {
		return nil, fmt.Errorf("graphql schema: %w", err)
	}
	dedupe := func(defs ast.DefinitionList) {
		for _, d := range defs {
			seen := map[string]bool{}
			d.Fields = slices.DeleteFunc(d.Fields, func(f *ast.FieldDefinition) bool {
				dup := seen[f.Name]
				seen[f.Name] = true
				return dup
			})
		}
	}
	dedupe(doc.Definitions)
	dedupe(doc.Extensions)
	schema, err := validator.ValidateSchemaDocument(doc)
	if err != nil {
		return nil, fmt.Errorf("graphql schema: %w", err)
	}
	return schema, nil
}

// GraphQLRequest is one GraphQL request the server answered.
type GraphQLRequest struct {
	// Operation is "query" or "mutation" and the top-level fields, e.g. "mutation addProjectV2ItemById".
	Operation string
	Query     string
	Variables map[string]any
	Errors    []string // the messages of the errors answered, if any
}

// GraphQLRequests lists the GraphQL requests answered so far, in order (invalid ones included).
func (s *Server) GraphQLRequests() []GraphQLRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.gql().log)
}

// graphQLState is the server's GraphQL side: the request log and the Projects (V2) model.
type graphQLState struct {
	log          []GraphQLRequest
	projectToken string
	projects     []*project
}

// gql returns the GraphQL state, creating it on first use; s.mu must be held.
func (s *Server) gql() *graphQLState {
	if s.graphql == nil {
		s.graphql = &graphQLState{}
	}
	return s.graphql
}

// gqlResponse is GitHub's answer shape: data (absent when the document is invalid) and errors.
type gqlResponse struct {
	Data   *orderedObject `json:"data,omitempty"`
	Errors []gqlError     `json:"errors,omitempty"`
}

type gqlError struct {
	Type       string         `json:"type,omitempty"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
	Locations  []gqlLocation  `json:"locations,omitempty"`
	Message    string         `json:"message"`
}

type gqlLocation struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// serveGraphQL answers POST /graphql: parse and validate the document and its variables against GitHub's
// schema, then execute it against the in-memory model. Like GitHub, it answers 200 with an "errors" list for
// an invalid document.
// serveGraphQL answers a GraphQL request and returns its operation (GraphQLRequest.Operation).
func (s *Server) serveGraphQL(w http.ResponseWriter, r *http.Request) string {
	if r.Method != http.MethodPost {
		writeJSON(w, http.StatusNotFound, errorBody("Not Found"))
		return ""
	}
	var body struct {
		Query         string         `json:"query"`
		Variables     map[string]any `json:"variables"`
		OperationName string         `json:"operationName"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody("Problems parsing JSON"))
		return ""
	}
	entry := GraphQLRequest{Query: body.Query, Variables: body.Variables}
	resp := s.runGraphQL(r, body.Query, body.OperationName, body.Variables, &entry)
	for _, e := range resp.Errors {
		entry.Errors = append(entry.Errors, e.Message)
	}
	s.mu.Lock()
	st := s.gql()
	st.log = append(st.log, entry)
	s.mu.Unlock()
	b, err := json.Marshal(resp)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return entry.Operation
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
	return entry.Operation
}

func (s *Server) runGraphQL(r *http.Request, query, opName string, vars map[string]any, entry *GraphQLRequest) gqlResponse {
	schema, err := graphQLSchema()
	if err != nil {
		s.t.Errorf("githubtest: %v", err)
		return gqlResponse{Errors: []gqlError{{Message: err.Error()}}}
	}
	if strings.TrimSpace(query) == "" {
		return gqlResponse{Errors: []gqlError{{Message: "A query attribute must be specified and must be a string."}}}
	}
	doc, errs := gqlparser.LoadQueryWithRules(schema, query, rules.NewDefaultRules())
	if len(errs) > 0 {
		return gqlResponse{Errors: fromGQLErrors(errs)}
	}
	var op *ast.OperationDefinition
	switch {
	case opName != "":
		op = doc.Operations.ForName(opName)
	case len(doc.Operations) == 1:
		op = doc.Operations[0]
	}
	if op == nil {
		return gqlResponse{Errors: []gqlError{{Message: "An operation name is required"}}}
	}
	entry.Operation = string(op.Operation)
	for _, sel := range op.SelectionSet {
		if f, ok := sel.(*ast.Field); ok {
			entry.Operation += " " + f.Name
		}
	}
	if vars == nil {
		vars = map[string]any{}
	}
	if e := strictVariables(op, vars); e != nil {
		return gqlResponse{Errors: []gqlError{*e}}
	}
	coerced, err := validator.VariableValues(schema, op, vars)
	if err != nil {
		return gqlResponse{Errors: []gqlError{variableError(op, err)}}
	}
	x := &executor{s: s, schema: schema, vars: coerced, token: bearer(r)}
	var root gqlObject = queryRoot{}
	if op.Operation == ast.Mutation {
		root = mutationRoot{}
	}
	s.mu.Lock()
	data := x.selectionSet(root, op.SelectionSet, nil)
	s.mu.Unlock()
	return gqlResponse{Data: data, Errors: x.errors}
}

func fromGQLErrors(errs gqlerror.List) []gqlError {
	out := make([]gqlError, 0, len(errs))
	for _, e := range errs {
		ge := gqlError{Message: e.Message}
		for _, l := range e.Locations {
			ge.Locations = append(ge.Locations, gqlLocation{Line: l.Line, Column: l.Column})
		}
		out = append(out, ge)
	}
	return out
}

// variableError words a variable that does not fit its declared type as GitHub does.
func variableError(op *ast.OperationDefinition, err error) gqlError {
	ge := gqlError{Message: err.Error()}
	gerr, ok := err.(*gqlerror.Error)
	if !ok || len(gerr.Path) < 2 {
		return ge
	}
	name, _ := gerr.Path[1].(ast.PathName)
	v := op.VariableDefinitions.ForName(string(name))
	if v == nil {
		return ge
	}
	ge.Message = fmt.Sprintf("Variable $%s of type %s was provided invalid value", v.Variable, v.Type.String())
	ge.Extensions = map[string]any{"problems": []any{map[string]any{"path": gerr.Path[2:], "explanation": gerr.Message}}}
	ge.Locations = []gqlLocation{{Line: v.Position.Line, Column: v.Position.Column}}
	return ge
}

// strictVariables refuses what gqlparser lets through but GitHub does not: a number given as a string for
// an Int variable.
func strictVariables(op *ast.OperationDefinition, vars map[string]any) *gqlError {
	for _, v := range op.VariableDefinitions {
		if v.Type.NamedType == "Int" {
			if _, isString := vars[v.Variable].(string); isString {
				return &gqlError{
					Message:   fmt.Sprintf("Variable $%s of type %s was provided invalid value", v.Variable, v.Type.String()),
					Locations: []gqlLocation{{Line: v.Position.Line, Column: v.Position.Column}},
				}
			}
		}
	}
	return nil
}

// bearer is the token of an Authorization header ("token T" or "bearer T", the scheme in any case).
func bearer(r *http.Request) string {
	scheme, t, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "token") {
		return t
	}
	return ""
}

// orderedObject is a JSON object that keeps its keys in selection order, as GitHub answers.
type orderedObject struct {
	keys []string
	vals map[string]any
}

func (o *orderedObject) set(k string, v any) {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

func (o *orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// gqlObject is a value of a GraphQL object type in the in-memory model.
type gqlObject interface {
	typeName() string
	// resolve returns a field's value: a scalar, nil, a gqlObject, a []gqlObject, or a *fieldError.
	resolve(x *executor, field string, args map[string]any) any
}

// fieldError is a field that could not be resolved: it answers null and an error, as GitHub does.
type fieldError struct {
	typ, msg string
}

// executor walks a validated operation's selection sets over the model. s.mu is held while it runs.
type executor struct {
	s      *Server
	schema *ast.Schema
	vars   map[string]any
	token  string
	errors []gqlError
}

func (x *executor) selectionSet(obj gqlObject, set ast.SelectionSet, path []any) *orderedObject {
	out := &orderedObject{}
	x.collect(obj, set, path, out)
	return out
}

func (x *executor) collect(obj gqlObject, set ast.SelectionSet, path []any, out *orderedObject) {
	for _, sel := range set {
		switch sel := sel.(type) {
		case *ast.Field:
			key := sel.Alias
			if key == "" {
				key = sel.Name
			}
			if sel.Name == "__typename" {
				out.set(key, obj.typeName())
				continue
			}
			fpath := append(slices.Clone(path), key)
			v := obj.resolve(x, sel.Name, sel.ArgumentMap(x.vars))
			out.set(key, x.value(v, sel, fpath))
		case *ast.InlineFragment:
			if x.applies(sel.TypeCondition, obj.typeName()) {
				x.collect(obj, sel.SelectionSet, path, out)
			}
		case *ast.FragmentSpread:
			if sel.Definition != nil && x.applies(sel.Definition.TypeCondition, obj.typeName()) {
				x.collect(obj, sel.Definition.SelectionSet, path, out)
			}
		}
	}
}

func (x *executor) value(v any, f *ast.Field, path []any) any {
	switch v := v.(type) {
	case *fieldError:
		x.errors = append(x.errors, gqlError{Type: v.typ, Path: path, Message: v.msg,
			Locations: []gqlLocation{{Line: f.Position.Line, Column: f.Position.Column}}})
		return nil
	case gqlObject:
		return x.selectionSet(v, f.SelectionSet, path)
	case []gqlObject:
		list := make([]any, len(v))
		for i, o := range v {
			list[i] = x.selectionSet(o, f.SelectionSet, append(slices.Clone(path), i))
		}
		return list
	}
	return v
}

// applies says whether a fragment on cond applies to an object of type typ (cond is the type itself, an
// interface it implements or a union it belongs to).
func (x *executor) applies(cond, typ string) bool {
	if cond == "" || cond == typ {
		return true
	}
	for _, d := range x.schema.PossibleTypes[cond] {
		if d.Name == typ {
			return true
		}
	}
	return false
}

// unimplemented answers a field the schema has but this server does not model: a test error, so the gap is
// seen rather than papered over with a null.
func (x *executor) unimplemented(typ, field string) any {
	x.s.t.Errorf("githubtest: GraphQL %s.%s is not implemented: add it in internal/githubtest", typ, field)
	return &fieldError{typ: "NOT_IMPLEMENTED", msg: fmt.Sprintf("githubtest does not implement %s.%s", typ, field)}
}
