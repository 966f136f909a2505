#!/bin/sh
# update.sh refreshes the GitHub data that ralph's tests use, so that `go test ./...`
# never reads outside the repository.
#
# Source: ../shared/github relative to the repository root (override with $GITHUB_DATA).
# That directory holds data published by GitHub and the Octokit project (MIT):
#   api.github.com.openapi.json.gz            @octokit/openapi@23.0.2, generated/api.github.com.json
#   schema.graphql.gz                         @octokit/graphql-schema@15.26.1, schema.graphql
#   webhook-examples.api.github.com.json.gz   @octokit/webhooks-examples@7.6.1, api.github.com/index.json
#
# Writes:
#   internal/githubtest/testdata/{api.github.com.openapi.json.gz,schema.graphql.gz,LICENSE.octokit-*}
#   internal/action/testdata/events/*.json   one real webhook payload per file (README.md there says
#                                            which are derived from an example, and how)
#
# Run from anywhere: sh internal/githubtest/testdata/update.sh
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
src=${GITHUB_DATA:-$root/../shared/github}
events=$root/internal/action/testdata/events

# The REST description is copied whole, and then trimmed (see below) into
# api.github.com.ralph.openapi.json.gz, which is what the test server loads.
cp "$src/api.github.com.openapi.json.gz" "$here/"
cp "$src/schema.graphql.gz" "$here/"
cp "$src/LICENSE.octokit-openapi" "$src/LICENSE.octokit-graphql-schema" "$here/"
chmod 644 "$here"/*.gz "$here"/LICENSE.*

# Trim the REST description for speed. kin-openapi needs about 5 s (2 CPUs) to load
# all 811 paths, which every test package that starts a githubtest.Server would pay;
# keeping only the path families below, plus every component they reach through $ref
# (transitively, so all references resolve), loads in about 0.25 s. A path family ralph
# starts to use must be added to KEEP. operations.txt lists every operation of the whole
# description, so the server can tell "GitHub has no such endpoint" from "trimmed here".
python3 - "$here/api.github.com.openapi.json.gz" "$here" <<'PY'
import gzip, json, re, sys

src, out = sys.argv[1], sys.argv[2]
KEEP = re.compile(
    r"^/repos/\{owner\}/\{repo\}$"
    r"|^/repos/\{owner\}/\{repo\}/(issues|labels|pulls|git|branches|commits|collaborators"
    r"|contents|compare|merges|statuses|milestones|actions/workflows|actions/runs|actions/jobs"
    r"|actions/permissions|actions/secrets|actions/organization-secrets|check-runs|check-suites|rules)(/|$)"
    r"|^/(user|rate_limit|meta)$|^/users/\{username\}$"
)
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

with gzip.open(src, "rt", encoding="utf-8") as f:
    doc = json.load(f)

with open(out + "/operations.txt", "w", encoding="utf-8") as f:
    f.write("# every operation of api.github.com.openapi.json.gz, written by update.sh\n")
    for path in sorted(doc["paths"]):
        for m in METHODS:
            if m in doc["paths"][path]:
                f.write(m.upper() + " " + path + "\n")

paths = {p: v for p, v in doc["paths"].items() if KEEP.search(p)}
components = doc["components"]
needed = set()

def walk(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                m = re.match(r"#/components/([^/]+)/(.+)$", v)
                if not m:
                    sys.exit("update.sh: unexpected $ref " + v)
                key = (m.group(1), m.group(2))
                if key not in needed:
                    needed.add(key)
                    walk(components[key[0]][key[1]])
            else:
                walk(v)
    elif isinstance(node, list):
        for v in node:
            walk(v)

walk(paths)
trimmed = {k: v for k, v in doc.items() if k not in ("paths", "components")}
trimmed["paths"] = paths
trimmed["components"] = {}
for kind, name in sorted(needed):
    trimmed["components"].setdefault(kind, {})[name] = components[kind][name]

with gzip.GzipFile(out + "/api.github.com.ralph.openapi.json.gz", "wb", mtime=0) as f:
    f.write(json.dumps(trimmed, sort_keys=True, separators=(",", ":")).encode("utf-8"))
print("update.sh: kept %d of %d paths, %d components" % (len(paths), len(doc["paths"]), len(needed)), file=sys.stderr)
PY

mkdir -p "$events"
cat > "$events/README.md" <<'MD'
# Webhook payloads

Real GitHub webhook payloads, one event per file, extracted by
`internal/githubtest/testdata/update.sh` from `@octokit/webhooks-examples@7.6.1`
(`api.github.com/index.json`, MIT License, Copyright (c) Octokit contributors).

`pull_request.closed.json` is derived: the examples hold no merged close, so it is the
first `closed` example with `merged: true`, `merged_at` = `closed_at` and `merged_by` =
the sender. The examples hold no failure either, so these are derived too, each from the
first example of its kind with only the named fields changed:
`pull_request_review.submitted.json` (review `state: changes_requested`),
`check_suite.completed-failure.json` (check suite `conclusion: failure`),
`workflow_run.completed-failure.json` (the first completed run that names a head
repository, `conclusion: failure`) and `issue_comment.created-on-pull.json` (the issue
gains the `pull_request` object GitHub sends for a comment on a pull request, built
from the issue's own URLs). The other files are examples as published.
MD

python3 - "$src/webhook-examples.api.github.com.json.gz" "$events" <<'PY'
import gzip, json, os, sys

src, out = sys.argv[1], sys.argv[2]
with gzip.open(src, "rt", encoding="utf-8") as f:
    events = {e["name"]: e["examples"] for e in json.load(f)}

def first(name, action=None, pred=lambda x: True):
    for x in events.get(name, []):
        if (action is None or x.get("action") == action) and pred(x):
            return x
    return None

def write(filename, payload):
    with open(os.path.join(out, filename), "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2, sort_keys=False)
        f.write("\n")

def need(x, what):
    if x is None:
        sys.exit("update.sh: no example for " + what)
    return x

write("issues.labeled.json", need(first("issues", "labeled"), "issues labeled"))
write("issues.unlabeled.json", need(first("issues", "unlabeled"), "issues unlabeled"))
write("issues.opened.json", need(first("issues", "opened"), "issues opened"))
write("issue_comment.created.json", need(first("issue_comment", "created"), "issue_comment created"))
write("workflow_dispatch.json", need(first("workflow_dispatch"), "workflow_dispatch"))

closed = need(first("pull_request", "closed"), "pull_request closed")
unmerged = first("pull_request", "closed", lambda x: x["pull_request"].get("merged") is False)
merged = first("pull_request", "closed", lambda x: x["pull_request"].get("merged") is True)

if unmerged is None:
    # Derived: the examples hold no unmerged close; copy a closed one and unmerge it.
    unmerged = json.loads(json.dumps(closed))
    unmerged["pull_request"].update(merged=False, merged_at=None, merged_by=None)
write("pull_request.closed-unmerged.json", unmerged)

if merged is None:
    # Derived: webhooks-examples@7.6.1 has no merged close (both "closed" examples have
    # merged=false). Copy the first closed example and mark it merged the way GitHub does:
    # merged=true, merged_at=closed_at, merged_by=the sender.
    merged = json.loads(json.dumps(closed))
    pr = merged["pull_request"]
    pr.update(merged=True, merged_at=pr.get("closed_at"), merged_by=merged.get("sender"))
write("pull_request.closed.json", merged)
write("merge_group.checks_requested.json", need(first("merge_group", "checks_requested"), "merge_group checks_requested"))

def derived(x, what):
    return json.loads(json.dumps(need(x, what)))

# The examples hold no failing check suite, workflow run or changes-requested review, and no
# comment on a pull request: each is the first example of its kind with only these fields changed.
review = derived(first("pull_request_review", "submitted"), "pull_request_review submitted")
review["review"]["state"] = "changes_requested"
write("pull_request_review.submitted.json", review)

suite = derived(first("check_suite", "completed"), "check_suite completed")
suite["check_suite"]["conclusion"] = "failure"
write("check_suite.completed-failure.json", suite)

wrun = derived(first("workflow_run", "completed", lambda x: x["workflow_run"].get("head_repository") is not None),
               "workflow_run completed with a head repository")
wrun["workflow_run"]["conclusion"] = "failure"
write("workflow_run.completed-failure.json", wrun)

onpull = derived(first("issue_comment", "created"), "issue_comment created")
iss = onpull["issue"]
html = iss["html_url"].replace("/issues/", "/pull/")
iss["pull_request"] = {"url": iss["url"].replace("/issues/", "/pulls/"), "html_url": html,
                       "diff_url": html + ".diff", "patch_url": html + ".patch", "merged_at": None}
write("issue_comment.created-on-pull.json", onpull)
PY
echo "update.sh: wrote $here and $events" >&2
