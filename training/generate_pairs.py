"""Pairs in the style of project notes, generated from templates (ours, committed).

    python training/generate_pairs.py --out training/data/generated.jsonl

Each pair is (premise, hypothesis, label) with label contradiction / entailment / neutral, a
`family` (the template kind) and a `group` (family + subject): pairs of one group share their
sentences, so the split in `pair_data.py` assigns whole groups to train, dev or test.

Kinds, each from hand-written subjects and values (no sentence of the evaluation sets):
- choice: the same subject with another tool or value (contradiction), restated (entailment),
  another subject or an addition (neutral);
- value: versions, ports, durations, counts that change (contradiction) or restated;
- identifier: a number that names the subject ("Worker pool 2" / "Worker pool 5"): neutral;
- rule: an instruction and its negation (contradiction), restated (entailment), a scoped
  exception ("On macOS, run X instead of Y" against "Always run Y": neutral);
- history: "moved from A to B" against "uses A" (contradiction) and "uses B" (entailment).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

C, E, N = "contradiction", "entailment", "neutral"

# (subject phrase, category of tools); phrasing templates take {s} subject, {t} tool.
SUBJECTS = [
    ("the backend services", "lang"),
    ("the command-line tool", "lang"),
    ("the data pipeline", "lang"),
    ("the CI pipeline", "ci"),
    ("our builds", "ci"),
    ("the nightly jobs", "ci"),
    ("the Python tests", "pytest"),
    ("the unit tests", "pytest"),
    ("the integration suite", "pytest"),
    ("the frontend tests", "jstest"),
    ("the browser tests", "jstest"),
    ("the component tests", "jstest"),
    ("the main database", "db"),
    ("the billing service", "db"),
    ("the analytics store", "db"),
    ("the job queue", "queue"),
    ("background work", "queue"),
    ("the event bus", "queue"),
    ("the response cache", "cache"),
    ("session storage", "cache"),
    ("rate limiting", "cache"),
    ("error tracking", "errors"),
    ("crash reports", "errors"),
    ("exception reporting", "errors"),
    ("Python dependencies", "pydeps"),
    ("the lock file", "pydeps"),
    ("virtual environments", "pydeps"),
    ("JavaScript packages", "jsdeps"),
    ("the web app's dependencies", "jsdeps"),
    ("the monorepo", "jsdeps"),
    ("code formatting", "fmt"),
    ("the style checks", "fmt"),
    ("import sorting", "fmt"),
    ("type checking", "types"),
    ("static analysis", "types"),
    ("the type checks", "types"),
    ("the docs site", "docs"),
    ("the API reference", "docs"),
    ("the user guide", "docs"),
    ("infrastructure", "iac"),
    ("the cloud resources", "iac"),
    ("the network setup", "iac"),
    ("container images", "registry"),
    ("release artifacts", "registry"),
    ("the base images", "registry"),
    ("logs", "logs"),
    ("service metrics", "logs"),
    ("request traces", "logs"),
    ("the web framework", "web"),
    ("the HTTP API", "web"),
    ("the admin backend", "web"),
    ("secrets", "secrets"),
    ("API keys", "secrets"),
    ("the signing keys", "secrets"),
    ("feature flags", "flags"),
    ("gradual rollouts", "flags"),
    ("the experiments", "flags"),
    ("deployments", "deploy"),
    ("the staging cluster", "deploy"),
    ("the production services", "deploy"),
]
TOOLS = {
    "lang": ["Go", "Rust", "Python", "Kotlin", "TypeScript", "Java", "Elixir"],
    "ci": ["GitHub Actions", "Jenkins", "GitLab CI", "CircleCI", "Buildkite", "Drone"],
    "pytest": ["pytest", "unittest", "nose2", "ward", "hypothesis-only runs"],
    "jstest": ["Jest", "Vitest", "Mocha", "Playwright", "Cypress", "Jasmine"],
    "db": ["PostgreSQL", "MySQL", "SQLite", "MongoDB", "CockroachDB", "DynamoDB"],
    "queue": ["RabbitMQ", "Kafka", "Amazon SQS", "Redis Streams", "NATS", "Celery with Redis"],
    "cache": ["Redis", "Memcached", "an in-process LRU cache", "Varnish", "Hazelcast"],
    "errors": ["Sentry", "Rollbar", "Bugsnag", "Honeybadger", "Datadog"],
    "pydeps": ["uv", "Poetry", "pip-tools", "Pipenv", "PDM", "Conda"],
    "jsdeps": ["pnpm", "npm", "Yarn", "Bun", "Lerna"],
    "fmt": ["Ruff", "Black", "Prettier", "isort", "autopep8", "Biome"],
    "types": ["mypy", "Pyright", "pytype", "Flow", "tsc in strict mode"],
    "docs": ["MkDocs", "Sphinx", "Docusaurus", "Hugo", "Read the Docs", "GitHub Pages"],
    "iac": ["Terraform", "Pulumi", "CloudFormation", "Ansible", "the AWS CDK"],
    "registry": ["Docker Hub", "Amazon ECR", "GitHub Container Registry", "Quay", "Artifactory"],
    "logs": ["Loki", "Elasticsearch", "CloudWatch", "Splunk", "Grafana Cloud", "Prometheus"],
    "web": ["FastAPI", "Django", "Flask", "Express", "Rails", "Spring Boot"],
    "secrets": ["Vault", "AWS Secrets Manager", "1Password", "SOPS", "Doppler"],
    "flags": ["LaunchDarkly", "Unleash", "Flagsmith", "a config file", "ConfigCat"],
    "deploy": ["Kubernetes", "Nomad", "ECS", "Heroku", "Fly.io", "bare EC2 instances"],
}
USE = [
    "{S} uses {t}.",
    "We use {t} for {s}.",
    "{S} runs on {t}.",
    "For {s} we rely on {t}.",
    "{t} is what {s} is built on.",
    "{S} is handled by {t}.",
    "Our team uses {t} for {s}.",
    "{S}: {t}.",
    "We standardised on {t} for {s}.",
    "{S} should use {t}.",
]
ALSO = [
    "{S} also uses {t2} for local development.",
    "{S} logs its warnings to the console.",
    "{S} is owned by the platform team.",
    "{S} was reviewed last month.",
    "{S} must be documented in the README.",
    "We plan to measure {s} next quarter.",
    "{S} has its own on-call rotation.",
    "Changes to {s} need two approvals.",
]
HISTORY_FROM = [
    "We moved {s} from {a} to {b}.",
    "{S} was migrated from {a} to {b}.",
    "{S} switched from {a} to {b} last year.",
    "{S} no longer uses {a}; it uses {b} now.",
    "We replaced {a} with {b} for {s}.",
]

# Values: (subject sentence template with {v}, value list, restatement template).
VALUES = [
    (
        "{v} is the Python version used in CI.",
        ["Python 3.9", "Python 3.10", "Python 3.11", "Python 3.12", "Python 3.13"],
        "CI runs the tests on {v}.",
    ),
    (
        "The API server listens on port {v}.",
        ["8000", "8080", "9090", "3000", "5000", "8443"],
        "Port {v} is where the API server listens.",
    ),
    (
        "Requests time out after {v}.",
        ["5 seconds", "10 seconds", "30 seconds", "2 minutes", "500 milliseconds"],
        "The request timeout is {v}.",
    ),
    (
        "We keep backups for {v}.",
        ["7 days", "30 days", "90 days", "one year", "two weeks"],
        "Backups are retained for {v}.",
    ),
    (
        "The service runs {v} replicas in production.",
        ["two", "three", "four", "six", "ten"],
        "Production has {v} replicas of the service.",
    ),
    (
        "Uploads are limited to {v}.",
        ["10 MB", "50 MB", "100 MB", "1 GB", "5 MB"],
        "The maximum upload size is {v}.",
    ),
    (
        "Node {v} is required to build the frontend.",
        ["16", "18", "20", "22"],
        "Building the frontend needs Node {v}.",
    ),
    (
        "The minimum supported Go version is {v}.",
        ["1.20", "1.21", "1.22", "1.23"],
        "We support Go {v} and later.",
    ),
    (
        "Pull requests need {v} approvals before merging.",
        ["one", "two", "three"],
        "Merging a pull request takes {v} approvals.",
    ),
    (
        "Access tokens expire after {v}.",
        ["15 minutes", "one hour", "24 hours", "seven days"],
        "Tokens are valid for {v}.",
    ),
    (
        "The nightly build starts at {v} UTC.",
        ["01:00", "02:00", "03:30", "05:00"],
        "At {v} UTC the nightly build begins.",
    ),
    (
        "Line length is capped at {v} characters.",
        ["79", "88", "100", "120"],
        "The maximum line length is {v} characters.",
    ),
    (
        "The release branch is cut every {v}.",
        ["week", "two weeks", "month", "sprint"],
        "Every {v} we cut a release branch.",
    ),
    (
        "The on-call engineer must respond within {v}.",
        ["5 minutes", "15 minutes", "an hour"],
        "On-call has {v} to respond.",
    ),
    (
        "Database connections are pooled with a limit of {v}.",
        ["10", "20", "50", "100"],
        "The connection pool holds at most {v} connections.",
    ),
    (
        "Coverage must stay above {v} percent.",
        ["70", "80", "90", "95"],
        "We require at least {v} percent test coverage.",
    ),
    (
        "The deploy uses the {v} region.",
        ["us-east-1", "eu-west-1", "eu-central-1", "ap-southeast-2"],
        "We deploy to {v}.",
    ),
    (
        "The default branch is {v}.",
        ["main", "master", "develop", "trunk"],
        "{v} is our default branch.",
    ),
]

# Identifiers: a number or name that names the thing; the rest is the same claim.
IDENTS = [
    ("Worker pool {n} handles the image resizing.", "pool"),
    ("Partition {n} holds the archived orders.", "partition"),
    ("Step {n} of the release checklist is signed off by QA.", "step"),
    ("Cluster {n} is being decommissioned.", "cluster"),
    ("Ticket {n} tracks the login bug.", "ticket"),
    ("Phase {n} of the migration is owned by the data team.", "phase"),
    ("Replica {n} serves the read traffic.", "replica"),
    ("Rack {n} runs on the old hardware.", "rack"),
    ("Milestone {n} covers the search features.", "milestone"),
    ("Queue {n} receives the webhook events.", "queue"),
    ("Room {n} is booked for the architecture review.", "room"),
    ("Test group {n} is flaky on Windows.", "group"),
    ("Region {n} uses the cheaper storage tier.", "region"),
    ("Node {n} was rebooted after the kernel update.", "node"),
    ("Lane {n} of the build farm compiles the Android app.", "lane"),
    ("Tenant {n} is on the enterprise plan.", "tenant"),
    ("Gate {n} blocks releases without a changelog entry.", "gate"),
    ("Runner {n} has the GPU attached.", "runner"),
    ("Bucket {n} stores the nightly exports.", "bucket"),
    ("Service {n} talks to the payment provider.", "service"),
    ("Stage {n} of the pipeline builds the containers.", "stage"),
    ("Channel {n} is used for the release announcements.", "channel"),
    ("Dashboard {n} shows the checkout latency.", "dashboard"),
    ("Vault {n} keeps the staging credentials.", "vault"),
]
IDENT_CHANGE = [  # same identifier, changed claim: contradiction
    ("handles the image resizing", "handles the video encoding"),
]

# Rules: (do, don't, restated do) for an instruction; scoped exceptions use (scope, alt).
RULES = [
    (
        "Run `make check` before every commit.",
        "Never run `make check` before committing; CI does it.",
        "Before committing, always run `make check`.",
    ),
    (
        "Use tabs for indentation in the Go code.",
        "Do not use tabs in the Go code.",
        "The Go code is indented with tabs.",
    ),
    (
        "Write commit messages in the imperative mood.",
        "Don't write commit messages in the imperative mood.",
        "Commit messages use the imperative mood.",
    ),
    (
        "Squash commits when merging a pull request.",
        "Never squash commits when merging.",
        "Pull requests are merged with their commits squashed.",
    ),
    (
        "Add a changelog entry for every user-facing change.",
        "Do not add changelog entries by hand.",
        "Every user-facing change gets a changelog entry.",
    ),
    (
        "Mock the network in unit tests.",
        "Unit tests must never mock the network.",
        "Unit tests run with the network mocked.",
    ),
    (
        "Keep functions under 50 lines.",
        "There is no limit on function length.",
        "Functions should stay below 50 lines.",
    ),
    (
        "Use f-strings for string formatting.",
        "Avoid f-strings; use str.format instead.",
        "Strings are formatted with f-strings.",
    ),
    (
        "Pin every dependency to an exact version.",
        "Do not pin dependencies to exact versions.",
        "All dependencies are pinned to exact versions.",
    ),
    (
        "Run the complete end-to-end suite before a release.",
        "Never run the whole end-to-end suite before a release.",
        "Before a release, the full end-to-end suite is run.",
    ),
    (
        "Use relative imports inside the package.",
        "Never use relative imports.",
        "Inside the package, imports are relative.",
    ),
    (
        "Write docstrings for every public function.",
        "Public functions don't need docstrings.",
        "Every public function has a docstring.",
    ),
    (
        "Store timestamps in UTC.",
        "Store timestamps in local time, not UTC.",
        "All timestamps are stored in UTC.",
    ),
    (
        "Rebase feature branches on main before merging.",
        "Don't rebase feature branches; merge main into them.",
        "Feature branches are rebased on main before they merge.",
    ),
    (
        "Name test files with a `_test` suffix.",
        "Test files must not end in `_test`.",
        "Test files carry the `_test` suffix.",
    ),
    (
        "Use snake_case for database column names.",
        "Database columns are named in camelCase, not snake_case.",
        "Column names in the database are snake_case.",
    ),
    (
        "Tag releases with a leading `v`.",
        "Release tags have no leading `v`.",
        "Release tags start with `v`.",
    ),
    (
        "Run migrations automatically on deploy.",
        "Migrations are never run automatically on deploy.",
        "Deploys run the migrations automatically.",
    ),
    (
        "Enable strict mode in the TypeScript config.",
        "Keep TypeScript strict mode off.",
        "The TypeScript config has strict mode enabled.",
    ),
    (
        "Log in JSON format.",
        "Do not log in JSON; use plain text lines.",
        "Logs are written as JSON.",
    ),
    (
        "Generate the client from the OpenAPI spec.",
        "Write the client by hand; don't generate it.",
        "The client is generated from the OpenAPI spec.",
    ),
    (
        "Use the `--frozen` flag when syncing dependencies.",
        "Never pass `--frozen` when syncing dependencies.",
        "Dependency syncs use `--frozen`.",
    ),
    (
        "Keep secrets out of the repository.",
        "Commit the development secrets to the repository.",
        "No secret is stored in the repository.",
    ),
    (
        "Review every pull request within a day.",
        "Pull requests can wait a week for review.",
        "Pull requests are reviewed within one day.",
    ),
]
# (command, alternative, scope) for scoped exceptions.
COMMANDS = [
    ("`./build.sh test`", "`build.cmd test`", "On Windows"),
    ("`make lint`", "`just lint`", "On the CI runners"),
    ("`npm ci`", "`npm install`", "In the sandbox"),
    ("`pytest -x`", "`pytest -n auto`", "For the slow suite"),
    ("`cargo build`", "`cross build`", "When targeting ARM"),
    ("`docker compose up`", "`podman compose up`", "On Fedora"),
    ("`uv sync`", "`pip install -e .`", "In the legacy image"),
    ("`yarn test`", "`yarn test --runInBand`", "On machines with little memory"),
    ("`go test ./...`", "`go test -short ./...`", "For quick local checks"),
    ("`terraform apply`", "`terraform plan`", "On pull requests"),
    ("`gradle build`", "`gradlew.bat build`", "On Windows machines"),
    ("`bin/setup`", "`bin/setup --offline`", "Without network access"),
    ("`tox -e py`", "`tox -e py312`", "For the release build"),
    ("`mvn verify`", "`mvn verify -DskipITs`", "In draft pull requests"),
    ("`./run format`", "`run.ps1 format`", "In PowerShell"),
]


def cap(s: str) -> str:
    return s[0].upper() + s[1:]


def pick(rng: random.Random, xs: list[str], k: int) -> list[str]:
    return rng.sample(xs, min(k, len(xs)))


def use(tpl: str, s: str, t: str) -> str:
    return tpl.format(S=cap(s), s=s, t=t)


def choice_pairs(rng: random.Random) -> list[dict[str, str]]:
    out = []
    for s, cat in SUBJECTS:
        group = f"choice:{s}"
        tools = TOOLS[cat]
        for _ in range(6):
            a, b = pick(rng, tools, 2)
            t1, t2, t3 = pick(rng, USE, 3)
            out.append(
                dict(p=use(t1, s, a), h=use(t2, s, b), label=C, family="choice", group=group)
            )
            out.append(
                dict(p=use(t1, s, a), h=use(t3, s, a), label=E, family="choice", group=group)
            )
            other_s = rng.choice([x for x, c in SUBJECTS if c != cat])
            other_t = rng.choice(TOOLS[dict(SUBJECTS)[other_s]])
            out.append(
                dict(
                    p=use(t1, s, a),
                    h=use(t2, other_s, other_t),
                    label=N,
                    family="choice",
                    group=group,
                )
            )
            also = rng.choice(ALSO).format(S=cap(s), s=s, t2=b)
            out.append(dict(p=use(t1, s, a), h=also, label=N, family="choice", group=group))
            h = rng.choice(HISTORY_FROM).format(S=cap(s), s=s, a=a, b=b)
            out.append(dict(p=use(t1, s, a), h=h, label=C, family="history", group=group))
            out.append(dict(p=h, h=use(t2, s, b), label=E, family="history", group=group))
            neg = rng.choice(
                [
                    f"{cap(s)} does not use {a}.",
                    f"We don't use {a} for {s}.",
                    f"{cap(s)} never runs on {a}.",
                ]
            )
            out.append(dict(p=use(t1, s, a), h=neg, label=C, family="negation", group=group))
            out.append(dict(p=neg, h=use(t3, s, b), label=N, family="negation", group=group))
    return out


def value_pairs(rng: random.Random) -> list[dict[str, str]]:
    out = []
    for i, (tpl, vals, rest) in enumerate(VALUES):
        group = f"value:{i}"
        for _ in range(12):
            a, b = pick(rng, vals, 2)
            out.append(
                dict(p=tpl.format(v=a), h=tpl.format(v=b), label=C, family="value", group=group)
            )
            out.append(
                dict(
                    p=tpl.format(v=a), h=cap(rest.format(v=b)), label=C, family="value", group=group
                )
            )
            out.append(
                dict(
                    p=tpl.format(v=a), h=cap(rest.format(v=a)), label=E, family="value", group=group
                )
            )
            out.append(
                dict(
                    p=cap(rest.format(v=a)), h=tpl.format(v=a), label=E, family="value", group=group
                )
            )
    return out


def ident_pairs(rng: random.Random) -> list[dict[str, str]]:
    out = []
    for i, (tpl, _kind) in enumerate(IDENTS):
        group = f"ident:{i}"
        other_pred = IDENTS[(i + 7) % len(IDENTS)][0].split(" ", 2)[2]
        for _ in range(10):
            n, m = rng.sample(range(1, 40), 2)
            a, b = tpl.format(n=n), tpl.format(n=m)
            out.append(dict(p=a, h=b, label=N, family="ident", group=group))
            out.append(dict(p=b, h=a, label=N, family="ident", group=group))
            out.append(
                dict(
                    p=a,
                    h=a.replace(".", " now.") if rng.random() < 0.5 else a,
                    label=E,
                    family="ident",
                    group=group,
                )
            )
            words = a.split(" ")
            neg = " ".join(words[:2]) + " no longer " + " ".join(words[2:])
            if words[2] in {
                "is",
                "was",
                "has",
                "runs",
                "holds",
                "handles",
                "uses",
                "covers",
                "serves",
                "receives",
                "stores",
                "talks",
                "shows",
                "keeps",
                "blocks",
                "tracks",
            }:
                out.append(
                    dict(
                        p=a,
                        h=neg.replace(" no longer is", " is no longer").replace(
                            " no longer was", " was no longer"
                        ),
                        label=C,
                        family="ident",
                        group=group,
                    )
                )
            out.append(
                dict(
                    p=a,
                    h=" ".join(words[:2]) + " " + other_pred,
                    label=N,
                    family="ident",
                    group=group,
                )
            )
    return out


def rule_pairs(rng: random.Random) -> list[dict[str, str]]:
    out = []
    for i, (do, dont, rest) in enumerate(RULES):
        group = f"rule:{i}"
        out += [
            dict(p=do, h=dont, label=C, family="rule", group=group),
            dict(p=dont, h=do, label=C, family="rule", group=group),
            dict(p=rest, h=dont, label=C, family="rule", group=group),
            dict(p=do, h=rest, label=E, family="rule", group=group),
            dict(p=rest, h=do, label=E, family="rule", group=group),
        ]
        other = RULES[(i + 5) % len(RULES)]
        out.append(dict(p=do, h=other[1], label=N, family="rule", group=group))
        out.append(dict(p=dont, h=other[2], label=N, family="rule", group=group))
    for i, (cmd, alt, scope) in enumerate(COMMANDS):
        group = f"scope:{i}"
        always = rng.choice(
            ["Always run {c}.", "Run {c} before pushing.", "Use {c} to run the checks."]
        )
        base = always.format(c=cmd)
        excs = [
            f"{scope}, run {alt} instead of {cmd}.",
            f"{scope}, use {alt} rather than {cmd}.",
            f"{scope}, {alt} replaces {cmd}.",
        ]
        for exc in excs:
            out.append(dict(p=base, h=exc, label=N, family="scope", group=group))
            out.append(dict(p=exc, h=base, label=N, family="scope", group=group))
        out.append(dict(p=base, h=f"Never run {cmd}.", label=C, family="scope", group=group))
        out.append(
            dict(
                p=base,
                h=f"Don't use {cmd}; run {alt} everywhere.",
                label=C,
                family="scope",
                group=group,
            )
        )
        out.append(
            dict(p=base, h=f"{cmd} is the command to run.", label=E, family="scope", group=group)
        )
        out.append(
            dict(
                p=f"{scope}, run {alt}.",
                h=f"{scope}, {alt} is the command to use.",
                label=E,
                family="scope",
                group=group,
            )
        )
    return out


def generate(seed: int = 13) -> list[dict[str, str]]:
    rng = random.Random(seed)
    pairs = choice_pairs(rng) + value_pairs(rng) + ident_pairs(rng) + rule_pairs(rng)
    seen: set[tuple[str, str]] = set()
    out = []
    for p in pairs:
        key = (p["p"], p["h"])
        if key in seen or (p["p"] == p["h"] and p["label"] != E):
            continue
        seen.add(key)
        out.append(p)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "data" / "generated.jsonl")
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    pairs = generate(args.seed)
    with args.out.open("w") as f:
        for p in pairs:
            f.write(json.dumps(p) + "\n")
    from collections import Counter

    print(len(pairs), Counter(p["label"] for p in pairs), Counter(p["family"] for p in pairs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
