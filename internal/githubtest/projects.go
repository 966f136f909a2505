package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The Projects (V2) model behind the GraphQL API: projects owned by a user or an organization, their fields
// (single-select fields with options), and their items (issues). The repository's owner is an organization;
// any other login is a user. Only what ralph uses is modelled; any other field of these types is a test error.

type project struct {
	id, owner, title string
	number           int
	fields           []*projectField
	items            []*projectItem
}

type projectField struct {
	id, name string
	dataType string // SINGLE_SELECT, TITLE, TEXT, …
	options  []*projectOption
}

type projectOption struct {
	id, name, color, description string
}

type projectItem struct {
	id     string
	issue  int
	values map[string]string // field id → option id
}

// SetProjectToken makes token a second accepted credential and the only one that reaches Projects (V2):
// from then on the main Token is refused there, as an Actions GITHUB_TOKEN is. Without it, the main Token
// reaches projects (as a gh login with the project scope does).
func (s *Server) SetProjectToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gql().projectToken = token
}

// authorizedExtra says whether r carries the project token, which is accepted everywhere, or the main
// token after a lower-case "bearer" (GitHub takes the scheme in any case; githubv4 users often send it so).
func (s *Server) authorizedExtra(r *http.Request) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := bearer(r)
	return t != "" && (t == s.opts.Token || t == s.gql().projectToken)
}

// CreateProject creates project number of owner (a user, or the repository's owner, an organization) with
// GitHub's default fields (Title, and Status with Todo, In Progress and Done), and returns its node id.
func (s *Server) CreateProject(owner string, number int, title string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.gql()
	if s.findProject(owner, number) != nil {
		s.t.Errorf("githubtest: project %s/%d exists", owner, number)
	}
	p := &project{id: fmt.Sprintf("PVT_kw%d", s.newID()), owner: owner, number: number, title: title}
	p.fields = append(p.fields, &projectField{id: fmt.Sprintf("PVTF_%d", s.newID()), name: "Title", dataType: "TITLE"})
	status := &projectField{id: fmt.Sprintf("PVTSSF_%d", s.newID()), name: "Status", dataType: "SINGLE_SELECT"}
	for _, o := range []string{"Todo", "In Progress", "Done"} {
		status.options = append(status.options, s.newOption(o, "GRAY", ""))
	}
	p.fields = append(p.fields, status)
	st.projects = append(st.projects, p)
	return p.id
}

// AddProjectField adds a single-select field with the given options to a project, as a person would in the
// project's settings.
func (s *Server) AddProjectField(owner string, number int, name string, options ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.lookupProject(owner, number)
	if p == nil {
		return
	}
	f := &projectField{id: fmt.Sprintf("PVTSSF_%d", s.newID()), name: name, dataType: "SINGLE_SELECT"}
	for _, o := range options {
		f.options = append(f.options, s.newOption(o, "GRAY", ""))
	}
	p.fields = append(p.fields, f)
}

// ProjectFieldOptions lists the option names of a project's single-select field, in order (nil when the
// field does not exist).
func (s *Server) ProjectFieldOptions(owner string, number int, field string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.lookupProject(owner, number)
	if p == nil {
		return nil
	}
	f := p.field(field)
	if f == nil {
		return nil
	}
	var out []string
	for _, o := range f.options {
		out = append(out, o.name)
	}
	return out
}

// ProjectItemValue is the option set on issue n's item in a project's single-select field; ok is false when
// the issue is not on the board or has no value in that field.
func (s *Server) ProjectItemValue(owner string, number, n int, field string) (option string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.lookupProject(owner, number)
	if p == nil {
		return "", false
	}
	f := p.field(field)
	it := p.itemFor(n)
	if f == nil || it == nil {
		return "", false
	}
	if o := f.option(it.values[f.id]); o != nil {
		return o.name, true
	}
	return "", false
}

// RemoveProjectItem takes issue n off a project's board, as a person would.
func (s *Server) RemoveProjectItem(owner string, number, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.lookupProject(owner, number); p != nil {
		p.items = slices.DeleteFunc(p.items, func(it *projectItem) bool { return it.issue == n })
	}
}

func (s *Server) newOption(name, color, description string) *projectOption {
	return &projectOption{id: fmt.Sprintf("%08x", s.newID()), name: name, color: color, description: description}
}

func (s *Server) findProject(owner string, number int) *project {
	for _, p := range s.gql().projects {
		if strings.EqualFold(p.owner, owner) && p.number == number {
			return p
		}
	}
	return nil
}

func (s *Server) lookupProject(owner string, number int) *project {
	p := s.findProject(owner, number)
	if p == nil {
		s.t.Errorf("githubtest: no project %s/%d", owner, number)
	}
	return p
}

func (p *project) field(name string) *projectField {
	for _, f := range p.fields {
		if f.name == name {
			return f
		}
	}
	return nil
}

func (p *project) itemFor(n int) *projectItem {
	for _, it := range p.items {
		if it.issue == n {
			return it
		}
	}
	return nil
}

func (f *projectField) option(id string) *projectOption {
	for _, o := range f.options {
		if o.id == id {
			return o
		}
	}
	return nil
}

// --- GraphQL objects ---

// scopeError is what GitHub answers a token that cannot reach projects (a classic token without the
// project scope; the Actions token answers a FORBIDDEN "Resource not accessible by integration").
func (x *executor) scopeError(field string) *fieldError {
	st := x.s.gql()
	if st.projectToken == "" || x.token == st.projectToken {
		return nil
	}
	return &fieldError{typ: "INSUFFICIENT_SCOPES", msg: fmt.Sprintf("Your token has not been granted the required scopes to execute this query. "+
		"The '%s' field requires one of the following scopes: ['read:project'], but your token has only been granted the: ['repo'] scopes. "+
		"Please modify your token's scopes at: https://github.com/settings/tokens.", field)}
}

func gqlNotFound(format string, args ...any) *fieldError {
	return &fieldError{typ: "NOT_FOUND", msg: fmt.Sprintf(format, args...)}
}

type queryRoot struct{}

func (queryRoot) typeName() string { return "Query" }

func (queryRoot) resolve(x *executor, field string, args map[string]any) any {
	switch field {
	case "repositoryOwner", "user", "organization":
		login, _ := args["login"].(string)
		isOrg := strings.EqualFold(login, x.s.opts.Owner)
		_, known := x.s.userIDs[login]
		for _, p := range x.s.gql().projects {
			known = known || strings.EqualFold(p.owner, login)
		}
		switch {
		case field == "organization" && !isOrg:
			return gqlNotFound("Could not resolve to an Organization with the login of '%s'.", login)
		case field == "user" && isOrg, !known && !isOrg:
			if field == "repositoryOwner" {
				return nil // GitHub answers null without an error here
			}
			return gqlNotFound("Could not resolve to a User with the login of '%s'.", login)
		}
		return ownerObject{login: login, org: isOrg}
	case "viewer":
		return fields{"User", map[string]any{"login": x.s.opts.TokenLogin}}
	case "repository":
		owner, _ := args["owner"].(string)
		name, _ := args["name"].(string)
		if !strings.EqualFold(owner, x.s.opts.Owner) || !strings.EqualFold(name, x.s.opts.Repo) {
			return gqlNotFound("Could not resolve to a Repository with the name '%s/%s'.", owner, name)
		}
		return repositoryObject{}
	case "node":
		id, _ := args["id"].(string)
		if o := x.node(id); o != nil {
			return o
		}
		return gqlNotFound("Could not resolve to a node with the global id of '%s'", id)
	}
	return x.unimplemented("Query", field)
}

// node finds an object by its global id.
func (x *executor) node(id string) gqlObject {
	s := x.s
	if rest, ok := strings.CutPrefix(id, "I_"); ok {
		n, _ := strconv.ParseInt(rest, 10, 64)
		for _, is := range s.issues {
			if is.id == n && is.pull == nil {
				return issueObject{is: is}
			}
		}
		return nil
	}
	if rest, ok := strings.CutPrefix(id, "PRRT_"); ok {
		for _, th := range s.threads { // review threads, see reviews.go
			if fmt.Sprint(th.id) == rest {
				return threadObject{s, th}
			}
		}
		return nil
	}
	for _, p := range s.gql().projects {
		if p.id == id {
			return projectObject{p}
		}
		for _, it := range p.items {
			if it.id == id {
				return itemObject{p, it}
			}
		}
	}
	return nil
}

type ownerObject struct {
	login string
	org   bool
}

func (o ownerObject) typeName() string {
	if o.org {
		return "Organization"
	}
	return "User"
}

func (o ownerObject) resolve(x *executor, field string, args map[string]any) any {
	switch field {
	case "login":
		return o.login
	case "id":
		if o.org {
			return "O_" + o.login
		}
		return "U_" + o.login
	case "projectV2":
		if err := x.scopeError(field); err != nil {
			return err
		}
		n := intArg(args["number"])
		if p := x.s.findProject(o.login, n); p != nil {
			return projectObject{p}
		}
		return gqlNotFound("Could not resolve to a ProjectV2 with the number %d.", n)
	}
	return x.unimplemented(o.typeName(), field)
}

func intArg(v any) int {
	switch v := v.(type) {
	case int64:
		return int(v)
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

type projectObject struct{ p *project }

func (projectObject) typeName() string { return "ProjectV2" }

func (o projectObject) resolve(x *executor, field string, args map[string]any) any {
	switch field {
	case "id":
		return o.p.id
	case "title":
		return o.p.title
	case "number":
		return o.p.number
	case "field":
		name, _ := args["name"].(string)
		if f := o.p.field(name); f != nil {
			return fieldObject{f}
		}
		return nil
	case "fields":
		var nodes []gqlObject
		for _, f := range o.p.fields {
			nodes = append(nodes, fieldObject{f})
		}
		return connection{"ProjectV2FieldConfigurationConnection", nodes, args}
	case "items":
		var nodes []gqlObject
		for _, it := range o.p.items {
			nodes = append(nodes, itemObject{o.p, it})
		}
		return connection{"ProjectV2ItemConnection", nodes, args}
	}
	return x.unimplemented("ProjectV2", field)
}

type fieldObject struct{ f *projectField }

func (o fieldObject) typeName() string {
	if o.f.dataType == "SINGLE_SELECT" {
		return "ProjectV2SingleSelectField"
	}
	return "ProjectV2Field"
}

func (o fieldObject) resolve(x *executor, field string, args map[string]any) any {
	switch field {
	case "id":
		return o.f.id
	case "name":
		return o.f.name
	case "dataType":
		return o.f.dataType
	case "options":
		var names []string
		if list, ok := args["names"].([]any); ok {
			for _, n := range list {
				names = append(names, fmt.Sprint(n))
			}
		}
		var out []gqlObject
		for _, opt := range o.f.options {
			if names == nil || slices.Contains(names, opt.name) {
				out = append(out, fields{"ProjectV2SingleSelectFieldOption", map[string]any{
					"id": opt.id, "name": opt.name, "color": opt.color, "description": opt.description}})
			}
		}
		return out
	}
	return x.unimplemented(o.typeName(), field)
}

type itemObject struct {
	p  *project
	it *projectItem
}

func (itemObject) typeName() string { return "ProjectV2Item" }

func (o itemObject) resolve(x *executor, field string, args map[string]any) any {
	switch field {
	case "id":
		return o.it.id
	case "type":
		return "ISSUE"
	case "isArchived":
		return false
	case "project":
		return projectObject{o.p}
	case "content":
		if is := x.s.issues[o.it.issue]; is != nil {
			return issueObject{is}
		}
		return nil
	case "fieldValueByName":
		name, _ := args["name"].(string)
		f := o.p.field(name)
		if f == nil {
			return nil
		}
		opt := f.option(o.it.values[f.id])
		if opt == nil {
			return nil
		}
		return fields{"ProjectV2ItemFieldSingleSelectValue", map[string]any{
			"name": opt.name, "optionId": opt.id, "field": fieldObject{f}}}
	}
	return x.unimplemented("ProjectV2Item", field)
}

type issueObject struct{ is *issue }

func (o issueObject) typeName() string {
	if o.is.pull != nil {
		return "PullRequest"
	}
	return "Issue"
}

func (o issueObject) resolve(x *executor, field string, args map[string]any) any {
	switch field {
	case "id":
		return fmt.Sprintf("I_%d", o.is.id)
	case "databaseId":
		return o.is.id
	case "number":
		return o.is.number
	case "title":
		return o.is.title
	case "body":
		return o.is.body
	case "state":
		if o.is.pull != nil && o.is.pull.merged {
			return "MERGED"
		}
		return strings.ToUpper(o.is.state)
	case "stateReason":
		if o.is.stateReason == "" {
			return nil
		}
		return strings.ToUpper(o.is.stateReason)
	case "url":
		if o.is.pull != nil {
			return fmt.Sprintf("%s/pull/%d", x.s.repoHTML(), o.is.number)
		}
		return fmt.Sprintf("%s/issues/%d", x.s.repoHTML(), o.is.number)
	case "createdAt":
		return timeJSON(o.is.created)
	case "updatedAt":
		return timeJSON(o.is.updated)
	case "author":
		return actorObject{x.s, o.is.author}
	case "labels":
		var nodes []gqlObject
		for _, n := range o.is.labels {
			l := x.s.repoLabel(n)
			nodes = append(nodes, fields{"Label", map[string]any{"name": l.name, "color": l.color, "description": nullable(l.description)}})
		}
		return connection{"LabelConnection", nodes, args}
	case "comments":
		var nodes []gqlObject
		for _, c := range x.s.comments {
			if c.issue == o.is.number {
				nodes = append(nodes, commentObject{x.s, c})
			}
		}
		return connection{"IssueCommentConnection", nodes, args}
	case "projectItems":
		if err := x.scopeError(field); err != nil {
			return err
		}
		var nodes []gqlObject
		for _, p := range x.s.gql().projects {
			if it := p.itemFor(o.is.number); it != nil {
				nodes = append(nodes, itemObject{p, it})
			}
		}
		return connection{"ProjectV2ItemConnection", nodes, args}
	case "reviewThreads":
		if o.is.pull != nil {
			return x.s.reviewThreads(o.is.number, args) // reviews.go
		}
	case "headRefName":
		if o.is.pull != nil {
			return o.is.pull.head
		}
	case "headRefOid":
		if o.is.pull != nil {
			return x.s.headSHA(o.is)
		}
	}
	return x.unimplemented(o.typeName(), field)
}

// connection is a list with first/after paging; a cursor is the position after a node, as text.
type connection struct {
	typ   string
	nodes []gqlObject
	args  map[string]any
}

func (c connection) typeName() string { return c.typ }

func (c connection) resolve(x *executor, field string, _ map[string]any) any {
	lo := 0
	if after, ok := c.args["after"].(string); ok && after != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(after, "cursor:"))
		if err != nil || n < 0 || n > len(c.nodes) {
			return &fieldError{typ: "INVALID_CURSOR_ARGUMENTS", msg: fmt.Sprintf("`%s` does not appear to be a valid cursor.", after)}
		}
		lo = n
	}
	hi := len(c.nodes)
	if n, ok := c.args["first"]; ok && lo+intArg(n) < hi {
		hi = lo + intArg(n)
	}
	nodes := c.nodes[lo:hi]
	switch field {
	case "nodes":
		if nodes == nil {
			return []gqlObject{}
		}
		return nodes
	case "totalCount":
		return len(c.nodes)
	case "pageInfo":
		var end, start any
		if len(nodes) > 0 {
			end, start = fmt.Sprintf("cursor:%d", hi), fmt.Sprintf("cursor:%d", lo+1)
		}
		return fields{"PageInfo", map[string]any{"hasNextPage": hi < len(c.nodes), "hasPreviousPage": lo > 0,
			"endCursor": end, "startCursor": start}}
	}
	return x.unimplemented(c.typ, field)
}

// repositoryObject is the server's one repository.
type repositoryObject struct{}

func (repositoryObject) typeName() string { return "Repository" }

func (repositoryObject) resolve(x *executor, field string, args map[string]any) any {
	switch field {
	case "issue", "issueOrPullRequest":
		n := intArg(args["number"])
		is := x.s.issues[n]
		if is == nil || (field == "issue" && is.pull != nil) {
			return gqlNotFound("Could not resolve to an Issue with the number of %d.", n)
		}
		return issueObject{is: is}
	case "pullRequest":
		n := intArg(args["number"])
		is := x.s.issues[n]
		if is == nil || is.pull == nil {
			return gqlNotFound("Could not resolve to a PullRequest with the number of %d.", n)
		}
		return issueObject{is: is}
	case "collaborators":
		// Only the one-login form ralph asks (login: …), with the role as GraphQL names it.
		login, _ := args["login"].(string)
		if x.s.hideCollaborators {
			return &fieldError{typ: "FORBIDDEN", msg: "Must have push access to view repository collaborators."}
		}
		var edges []gqlObject
		if role := x.s.perms[login]; login != "" && role != "" && role != "none" {
			edges = append(edges, fields{"RepositoryCollaboratorEdge", map[string]any{
				"permission": strings.ToUpper(role), "node": actorObject{x.s, login}}})
		}
		return fields{"RepositoryCollaboratorConnection", map[string]any{"edges": edges, "totalCount": len(edges)}}
	}
	return x.unimplemented("Repository", field)
}

// actorObject is an account as GraphQL names it: a bot's login without the "[bot]" REST shows.
type actorObject struct {
	s     *Server
	login string
}

func (a actorObject) typeName() string {
	if strings.HasSuffix(a.login, "[bot]") {
		return "Bot"
	}
	return "User"
}

func (a actorObject) resolve(x *executor, field string, _ map[string]any) any {
	switch field {
	case "login":
		return strings.TrimSuffix(a.login, "[bot]")
	case "databaseId":
		return a.s.knowUser(a.login)
	}
	return x.unimplemented(a.typeName(), field)
}

type commentObject struct {
	s  *Server
	cm *comment
}

func (commentObject) typeName() string { return "IssueComment" }

func (c commentObject) resolve(x *executor, field string, _ map[string]any) any {
	switch field {
	case "id":
		return fmt.Sprintf("IC_%d", c.cm.id)
	case "databaseId":
		return c.cm.id
	case "body":
		return c.cm.body
	case "url":
		return fmt.Sprintf("%s/issues/%d#issuecomment-%d", c.s.repoHTML(), c.cm.issue, c.cm.id)
	case "createdAt":
		return timeJSON(c.cm.created)
	case "updatedAt":
		return timeJSON(c.cm.updated)
	case "author":
		return actorObject{c.s, c.cm.user}
	}
	return x.unimplemented("IssueComment", field)
}

// fields is an object whose fields are plain values (payloads, options, page info).
type fields struct {
	typ  string
	vals map[string]any
}

func (f fields) typeName() string { return f.typ }

func (f fields) resolve(x *executor, field string, _ map[string]any) any {
	if v, ok := f.vals[field]; ok {
		return v
	}
	return x.unimplemented(f.typ, field)
}

// --- mutations ---

type mutationRoot struct{}

func (mutationRoot) typeName() string { return "Mutation" }

func (mutationRoot) resolve(x *executor, field string, args map[string]any) any {
	in, _ := args["input"].(map[string]any)
	switch field {
	case "addProjectV2ItemById", "updateProjectV2ItemFieldValue", "createProjectV2Field":
		if err := x.scopeError(field); err != nil {
			return err
		}
	}
	switch field {
	case "addProjectV2ItemById":
		return x.addItem(in)
	case "updateProjectV2ItemFieldValue":
		return x.updateItemValue(in)
	case "createProjectV2Field":
		return x.createField(in)
	}
	return x.unimplemented("Mutation", field)
}

func (x *executor) projectByID(id any) *project {
	for _, p := range x.s.gql().projects {
		if p.id == id {
			return p
		}
	}
	return nil
}

func (x *executor) addItem(in map[string]any) any {
	p := x.projectByID(in["projectId"])
	if p == nil {
		return gqlNotFound("Could not resolve to a node with the global id of '%v'", in["projectId"])
	}
	content, _ := in["contentId"].(string)
	is, ok := x.node(content).(issueObject)
	if !ok {
		return gqlNotFound("Could not resolve to a node with the global id of '%s'", content)
	}
	// Adding an issue that is already on the board returns its item, as GitHub does.
	it := p.itemFor(is.is.number)
	if it == nil {
		it = &projectItem{id: fmt.Sprintf("PVTI_%d", x.s.newID()), issue: is.is.number, values: map[string]string{}}
		p.items = append(p.items, it)
	}
	return fields{"AddProjectV2ItemByIdPayload", map[string]any{"item": itemObject{p, it}, "clientMutationId": in["clientMutationId"]}}
}

func (x *executor) updateItemValue(in map[string]any) any {
	p := x.projectByID(in["projectId"])
	if p == nil {
		return gqlNotFound("Could not resolve to a node with the global id of '%v'", in["projectId"])
	}
	var it *projectItem
	for _, i := range p.items {
		if i.id == in["itemId"] {
			it = i
		}
	}
	if it == nil {
		return gqlNotFound("Could not resolve to a node with the global id of '%v'", in["itemId"])
	}
	var f *projectField
	for _, pf := range p.fields {
		if pf.id == in["fieldId"] {
			f = pf
		}
	}
	if f == nil {
		return gqlNotFound("Could not resolve to a node with the global id of '%v'", in["fieldId"])
	}
	value, _ := in["value"].(map[string]any)
	optID, isOpt := value["singleSelectOptionId"].(string)
	if !isOpt || len(value) != 1 {
		return x.unimplemented("ProjectV2FieldValue", "anything but singleSelectOptionId")
	}
	if f.dataType != "SINGLE_SELECT" || f.option(optID) == nil {
		return &fieldError{typ: "UNPROCESSABLE", msg: "The single select option Id does not belong to the field"}
	}
	it.values[f.id] = optID
	return fields{"UpdateProjectV2ItemFieldValuePayload", map[string]any{"projectV2Item": itemObject{p, it}, "clientMutationId": in["clientMutationId"]}}
}

func (x *executor) createField(in map[string]any) any {
	p := x.projectByID(in["projectId"])
	if p == nil {
		return gqlNotFound("Could not resolve to a node with the global id of '%v'", in["projectId"])
	}
	name, _ := in["name"].(string)
	if p.field(name) != nil {
		return &fieldError{typ: "UNPROCESSABLE", msg: "Name has already been taken"}
	}
	if in["dataType"] != "SINGLE_SELECT" {
		return x.unimplemented("CreateProjectV2FieldInput", fmt.Sprintf("dataType %v", in["dataType"]))
	}
	opts, _ := in["singleSelectOptions"].([]any)
	if len(opts) == 0 {
		return &fieldError{typ: "UNPROCESSABLE", msg: "Single select options must have at least one option"}
	}
	f := &projectField{id: fmt.Sprintf("PVTSSF_%d", x.s.newID()), name: name, dataType: "SINGLE_SELECT"}
	for _, o := range opts {
		m, _ := o.(map[string]any)
		name, _ := m["name"].(string)
		if slices.ContainsFunc(f.options, func(o *projectOption) bool { return o.name == name }) {
			return &fieldError{typ: "UNPROCESSABLE", msg: "Options must have unique names"}
		}
		f.options = append(f.options, x.s.newOption(name, fmt.Sprint(m["color"]), fmt.Sprint(m["description"])))
	}
	p.fields = append(p.fields, f)
	return fields{"CreateProjectV2FieldPayload", map[string]any{"projectV2Field": fieldObject{f}, "clientMutationId": in["clientMutationId"]}}
}
