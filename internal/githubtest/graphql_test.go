package githubtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// postGraphQL sends a GraphQL document as a client would and decodes GitHub's answer shape.
func postGraphQL(t *testing.T, s *Server, token, query string, vars map[string]any) (status int, data map[string]any, errs []map[string]any, raw string) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, s.GraphQLURL, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "bearer "+token)
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	var out struct {
		Data   map[string]any   `json:"data"`
		Errors []map[string]any `json:"errors"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
			t.Fatalf("answer is not JSON: %v\n%s", err, buf.String())
		}
	}
	return resp.StatusCode, out.Data, out.Errors, buf.String()
}

func TestGraphQLExecutesValidQuery(t *testing.T) {
	t.Parallel()
	s := New(t, Options{})
	id := s.CreateProject("octo", 3, "Roadmap")
	q := `query($n: Int!) {
  repositoryOwner(login: "octo") {
    __typename
    ... on ProjectV2Owner {
      projectV2(number: $n) {
        id
        title
        status: field(name: "Status") { ... on ProjectV2SingleSelectField { name options { name } } }
        missing: field(name: "Nope") { __typename }
      }
    }
  }
}`
	status, data, errs, raw := postGraphQL(t, s, "test-token", q, map[string]any{"n": 3})
	if status != http.StatusOK || len(errs) > 0 {
		t.Fatalf("status %d, errors %v\n%s", status, errs, raw)
	}
	want := map[string]any{"repositoryOwner": map[string]any{
		"__typename": "Organization",
		"projectV2": map[string]any{
			"id": id, "title": "Roadmap",
			"status":  map[string]any{"name": "Status", "options": []any{map[string]any{"name": "Todo"}, map[string]any{"name": "In Progress"}, map[string]any{"name": "Done"}}},
			"missing": nil,
		},
	}}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
	// Keys come in selection order, as GitHub sends them.
	if i, j := strings.Index(raw, `"id"`), strings.Index(raw, `"title"`); i < 0 || j < i {
		t.Errorf("fields out of selection order: %s", raw)
	}
	log := s.GraphQLRequests()
	if len(log) != 1 || log[0].Operation != "query repositoryOwner" || len(log[0].Errors) != 0 {
		t.Errorf("GraphQL log = %+v", log)
	}
}

func TestGraphQLRejectsInvalidDocuments(t *testing.T) {
	t.Parallel()
	s := New(t, Options{})
	s.CreateProject("octo", 1, "Board")
	tests := []struct {
		name  string
		query string
		vars  map[string]any
		want  string // in the first error's message
	}{
		{"misspelled field", `{ repositoryOwner(login: "octo") { ... on ProjectV2Owner { projectV2(number: 1) { titel } } } }`, nil,
			`Cannot query field "titel" on type "ProjectV2"`},
		{"wrong argument type", `{ repositoryOwner(login: "octo") { ... on ProjectV2Owner { projectV2(number: "1") { id } } } }`, nil,
			`Int cannot represent non-integer value`},
		{"unknown type in fragment", `{ node(id: "x") { ... on ProjectV2SingelSelectField { id } } }`, nil,
			`Unknown type "ProjectV2SingelSelectField"`},
		{"unknown argument", `{ repositoryOwner(login: "octo") { ... on ProjectV2Owner { projectV2(num: 1) { id } } } }`, nil,
			`Unknown argument "num"`},
		{"variable of the wrong type", `query($n: Int!) { repositoryOwner(login: "octo") { ... on ProjectV2Owner { projectV2(number: $n) { id } } } }`,
			map[string]any{"n": "one"}, `Variable $n of type Int! was provided invalid value`},
		{"missing variable", `query($n: Int!) { repositoryOwner(login: "octo") { ... on ProjectV2Owner { projectV2(number: $n) { id } } } }`,
			nil, `Variable $n of type Int! was provided invalid value`},
		{"variable with an unknown input field", `mutation($in: AddProjectV2ItemByIdInput!) { addProjectV2ItemById(input: $in) { item { id } } }`,
			map[string]any{"in": map[string]any{"projectId": "P", "contentId": "I_1", "extra": 1}}, `Variable $in of type AddProjectV2ItemByIdInput! was provided invalid value`},
		{"variable declared with a type the argument does not take", `query($n: String!) { repositoryOwner(login: "octo") { ... on ProjectV2Owner { projectV2(number: $n) { id } } } }`,
			map[string]any{"n": "1"}, `Variable "$n" of type "String!" used in position expecting type "Int!"`},
		{"syntax error", `{ repositoryOwner(login: "octo") { `, nil, `Expected Name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, data, errs, raw := postGraphQL(t, s, "test-token", tt.query, tt.vars)
			if status != http.StatusOK {
				t.Fatalf("status %d, want 200 (GitHub answers invalid documents with 200)\n%s", status, raw)
			}
			if data != nil {
				t.Errorf("data = %v, want none for an invalid document", data)
			}
			if len(errs) == 0 {
				t.Fatalf("no errors\n%s", raw)
			}
			if msg, _ := errs[0]["message"].(string); !strings.Contains(msg, tt.want) {
				t.Errorf("message = %q, want it to contain %q", msg, tt.want)
			}
			if locs, _ := errs[0]["locations"].([]any); len(locs) == 0 {
				t.Errorf("error has no locations: %s", raw)
			}
		})
	}
}

func TestGraphQLProjectToken(t *testing.T) {
	t.Parallel()
	s := New(t, Options{})
	s.CreateProject("octo", 1, "Board")
	s.SetProjectToken("project-token")
	q := `{ repositoryOwner(login: "octo") { ... on ProjectV2Owner { projectV2(number: 1) { title } } } }`

	_, data, errs, raw := postGraphQL(t, s, "project-token", q, nil)
	if len(errs) > 0 || data == nil {
		t.Fatalf("the project token was refused: %s", raw)
	}
	_, _, errs, raw = postGraphQL(t, s, "test-token", q, nil)
	if len(errs) != 1 || errs[0]["type"] != "INSUFFICIENT_SCOPES" {
		t.Errorf("the main token reached the project: %s", raw)
	}
	status, _, _, _ := postGraphQL(t, s, "wrong-token", q, nil)
	if status != http.StatusUnauthorized {
		t.Errorf("a wrong token: status %d, want 401", status)
	}
	// The project token is a credential like the main one.
	req, _ := http.NewRequest(http.MethodGet, s.URL+"/repos/octo/demo", nil)
	req.Header.Set("Authorization", "token project-token")
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("REST with the project token: status %d", resp.StatusCode)
	}
}

func TestGraphQLProjectNotFound(t *testing.T) {
	t.Parallel()
	s := New(t, Options{})
	q := `{ repositoryOwner(login: "octo") { ... on ProjectV2Owner { projectV2(number: 9) { id } } } }`
	_, data, errs, raw := postGraphQL(t, s, "test-token", q, nil)
	if len(errs) != 1 || errs[0]["type"] != "NOT_FOUND" {
		t.Fatalf("errors = %v\n%s", errs, raw)
	}
	if diff := cmp.Diff([]any{"repositoryOwner", "projectV2"}, errs[0]["path"]); diff != "" {
		t.Errorf("path (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"repositoryOwner": map[string]any{"projectV2": nil}}, data); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}
}
