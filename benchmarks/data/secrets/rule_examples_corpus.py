"""More scanners' labelled rule tests as a corpus, none read when memls' rules were
written:

- Nosey Parker (github.com/praetorian-inc/noseyparker, Apache-2.0): every rule of
  `crates/noseyparker/data/default/builtin/rules/*.yml` carries `examples` (its pattern must
  match them: a credential) and `negative_examples` (it must not: a false pattern);
- secretlint (github.com/secretlint/secretlint, MIT): every rule package's test snapshots,
  `packages/@secretlint/secretlint-rule-*/test/snapshots/<case>/input*` with the rule's
  `output.json`: a file the rule reports (`messages` not empty) is a credential, one it does not
  is a false pattern. A case with its own configuration (`.secretlintrc.json`, `options.ts`:
  an allow list, a switched-off check) is left out, and so are the rules whose findings are not
  a credential's format (a home directory, a `.env` file's name, a Kubernetes `Secret`
  manifest, a user's own patterns, comment filters, the example and internal test rules);
- detect-secrets (github.com/Yelp/detect-secrets, Apache-2.0): each plugin test's
  `pytest.mark.parametrize` table of a line and whether the plugin must flag it
  (`tests/plugins/*_test.py`, read with `ast`, the forms the tables use evaluated);
- ripsecrets (github.com/sirwart/ripsecrets, MIT): `test/none`, lines in which nothing may be
  found, and `test/one_per_line/*` and `test/one_per_file/*`, credentials;
- semgrep-rules (github.com/semgrep/semgrep-rules, LGPL-2.1 with the Commons Clause): the test
  files of the rules that report a credential written into code (`generic/secrets/security/`,
  and the rules named for a hard-coded or static credential), each line after a `ruleid:`
  annotation a credential and each after an `ok:` one a false pattern (gitleaks' rules that
  semgrep carries, `generic/secrets/gitleaks/`, are left out);
- Titus (github.com/praetorian-inc/titus, Apache-2.0), Nosey Parker's successor: its rules'
  examples and negative examples less those Nosey Parker's rules hold, all of them a part only
  reported (added after the rules written on the other sets' report parts, below);
- Kingfisher (github.com/mongodb/kingfisher, Apache-2.0), built on Nosey Parker's rules: its
  rules' examples and negative examples less those Nosey Parker's or Titus' rules hold, all of
  them a part only reported (added after the rules written on Titus' refusals);
- Sonar's secrets rules (github.com/SonarSource/sonar-text, LGPL-3.0 at the pinned commit, the
  last before they left the public repository): each rule's `examples`, a text and whether it
  `containsSecret`, all of them a part only reported (added with Kingfisher's);
- the test files of the hard-coded credential checks of Sonar's language analysers
  (github.com/SonarSource/sonar-java, sonar-php and sonar-python, each at the last commit
  under LGPL-3.0, before the SONAR Source-Available License): each line a test marks
  `Noncompliant` is a credential, each it marks `Compliant` a false pattern, the annotation
  cut off, the value a credential's longest string literal; a file whose check runs with its
  own configuration (`Custom`) is left out, all of them a part only reported (added after the
  rules written on Sonar's secrets rule examples). A false pattern is taken apart when it
  holds a whole such value of 12 characters or more (their parts are words: `password`);
- one set pooled from four sources, each with too few texts judged not a secret alone, all
  of it a part only reported (added after the rules written on the analysers' tests):
  whispers (github.com/Skyscanner/whispers, Apache-2.0), the lines of the fixtures its
  value test expects nothing of and the values its `is_static` test takes for no written
  value, with the lines holding `hardcoded` (its mark of a secret) as credentials; IBM's
  detect-secrets fork (github.com/IBM/detect-secrets, Apache-2.0), its plugin test tables
  read as Yelp's; DevSkim (github.com/microsoft/DevSkim, MIT), the `must-match` and
  `must-not-match` texts of its rules tagged for secrets; checkov (github.com/bridgecrewio/
  checkov, Apache-2.0), the lines of the folders its secrets runner tests expect no finding
  in. Lines of punctuation alone (`{`, `],`) are left out.

Nothing of any is kept in this repository: the corpus is rebuilt from the snapshots on each
run and printed only as counts and a digest. The false patterns are labelled as TruffleHog's
are (trufflehog_corpus.labelled): one that holds a value some example names as a credential, or
a near-copy of one of its own rule file's, is counted apart; the benchmark takes apart those the
whole of gitleaks reports.

Each rule file (Nosey Parker, `noseyparker/aws`), rule package (secretlint,
`secretlint/secretlint-rule-aws`) or test file (`detect-secrets/aws_key_test`,
`ripsecrets/none`, `semgrep/python/boto3/security/hardcoded-token.py`) goes to one of two
parts by the first byte of sha256 of that name (trufflehog_corpus.part): even is the part
rules may be tuned on, odd the part only reported. The split of each set was fixed before
memls was first run on it.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import yaml
from trufflehog_corpus import Case, Detector

NOSEYPARKER = "2e6e7f36ce36619852532bbe698d8cb7a26d2da7"
NP_RULES = "crates/noseyparker/data/default/builtin/rules/"
SECRETLINT = "18346ba31b8173d52060b971221ab38c1943def0"
SL_PACKAGES = "packages/@secretlint/"
DETECT_SECRETS = "5e141933554a0b74e7341841f318be21e895339c"
DS_TESTS = "tests/plugins/"
RIPSECRETS = "416e9d04d6ba8941fc3106bf986b6c8aa875767e"
SEMGREP = "157ae4706d7f54aa33647332f234dd68f30da195"
TITUS = "369d8dc4359a2d70629e0fe7732d3244a3315efc"
TITUS_RULES = "pkg/rule/rules/"
KINGFISHER = "ee7c0db3ef87575768f817820c24736249ffcdef"
KF_RULES = "data/rules/"
# the last commit before Sonar moved its secret rules out of the public repository (then
# LGPL-3.0; the repository's later licence, SSALv1, dates from after it)
SONAR = "da21f3d7a51144c0a4a33ae6d7a74c5a26c344ad"
SONAR_RULES = "sonar-text-plugin/src/main/resources/org/sonar/plugins/secrets/configuration/"
# the last commits of Sonar's language analysers under LGPL-3.0
SONAR_JAVA = "202f01a9f4c104f888179707157311502e1cf8b6"
SONAR_PHP = "d0f423e4ad2b4e58089dd15931a8d034025af322"
SONAR_PYTHON = "cbf9fe0127f243d75f7bdc757900b0b87ce30c1b"
SONAR_CHECK_TESTS = {
    "java": "java-checks-test-sources/",
    "php": "php-checks/src/test/resources/checks/",
    "python": "python-checks/src/test/resources/checks/",
}
SG_SECRETS = "generic/secrets/security/"
SG_NAMES = ("hardcode", "hard-code", "static-credentials", "in-source-code")
# secretlint rules whose findings are not a credential's format, or that only test the tool
SL_NOT_FORMATS = frozenset(
    {
        "secretlint-rule-no-homedir",
        "secretlint-rule-no-dotenv",
        "secretlint-rule-no-k8s-kind-secret",
        "secretlint-rule-pattern",
        "secretlint-rule-filter-comments",
        "secretlint-rule-example",
        "secretlint-rule-internal-test-cjs",
        "secretlint-rule-internal-test-esm",
        "secretlint-rule-preset-canary",
        "secretlint-rule-preset-recommend",
    }
)


def _git(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    ).stdout


def _blob(git_dir: Path, commit: str, path: str) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
    ).stdout


def _matched(pattern: str, text: str) -> list[str]:
    """What a rule's pattern captures in its example (the value, not the keyword before it);
    the whole example where Python's `re` cannot read the pattern or it captures nothing."""
    try:
        found = [m.group(m.lastindex or 0) for m in re.finditer(pattern, text)]
    except re.error:
        found = []
    return [v for v in found if v] or [text]


def load_noseyparker(
    git_dir: Path, commit: str = NOSEYPARKER, rules: str = NP_RULES, name: str = "noseyparker"
) -> list[Detector]:
    """One detector per rule file, its rules' examples as credentials and their negative
    examples as false patterns."""
    out = []
    for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit, rules).split():
        if not path.endswith((".yml", ".yaml")):
            continue
        d = Detector(f"{name}/{Path(path).stem}")
        for rule in yaml.safe_load(_git(git_dir, "show", f"{commit}:{path}")).get("rules", []):
            for text in rule.get("examples") or []:
                d.cases.append(Case(d.detector, rule["id"], text, _matched(rule["pattern"], text)))
            for text in rule.get("negative_examples") or []:
                d.cases.append(Case(d.detector, rule["id"], text, []))
        out.append(d)
    return out


def load_titus(git_dir: Path, np_dir: Path, commit: str = TITUS) -> list[Detector]:
    """Titus' rules (Nosey Parker's successor, the same format), less every text that Nosey
    Parker's rules at NOSEYPARKER hold: what is left was read by no one here before it was
    measured, so it is all a part only reported."""
    seen = {c.text for d in load_noseyparker(np_dir) for c in d.cases}
    out = load_noseyparker(git_dir, commit, TITUS_RULES, "titus")
    for d in out:
        d.cases = [c for c in d.cases if c.text not in seen]
    return out


def load_kingfisher(
    git_dir: Path, np_dir: Path, titus_dir: Path, commit: str = KINGFISHER
) -> list[Detector]:
    """Kingfisher's rules (built on Nosey Parker's, the same format), less every text that
    Nosey Parker's rules at NOSEYPARKER or Titus' at TITUS hold: what is left was read by no
    one here before it was measured, so it is all a part only reported."""
    seen = {c.text for d in load_noseyparker(np_dir) for c in d.cases}
    seen |= {
        c.text for d in load_noseyparker(titus_dir, TITUS, TITUS_RULES, "titus") for c in d.cases
    }
    out = load_noseyparker(git_dir, commit, KF_RULES, "kingfisher")
    for d in out:
        d.cases = [c for c in d.cases if c.text not in seen]
    return out


def load_sonar(git_dir: Path, commit: str = SONAR) -> list[Detector]:
    """One detector per provider specification of Sonar's secrets rules: each rule's
    `examples`, a text and whether it `containsSecret` (with the `match` it must report). An
    example given a `fileName` is left out: the rule's file filters may decide it, not its
    text. Read by no one here before it was measured: all of it is a part only reported."""
    out = []
    for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit, SONAR_RULES).split():
        if not path.endswith((".yml", ".yaml")):
            continue
        d = Detector(f"sonar/{Path(path).stem}")
        for rule in yaml.safe_load(_git(git_dir, "show", f"{commit}:{path}"))["provider"]["rules"]:
            for example in rule.get("examples") or []:
                text = example.get("text") or ""
                if "fileName" in example or not text.strip():
                    d.unread += 1
                    continue
                want = [example["match"]] if example.get("match") else [text]
                d.cases.append(
                    Case(d.detector, rule["id"], text, want if example["containsSecret"] else [])
                )
        out.append(d)
    return out


def load_secretlint(git_dir: Path, commit: str = SECRETLINT) -> list[Detector]:
    """One detector per rule package, its snapshot inputs as credentials or false patterns by
    whether the rule reported them."""
    files = _git(git_dir, "ls-tree", "-r", "--name-only", commit, SL_PACKAGES).splitlines()
    cases: dict[tuple[str, str], list[str]] = {}
    for path in files:
        parts = path.split("/")
        if len(parts) == 7 and parts[3:5] == ["test", "snapshots"]:
            cases.setdefault((parts[2], parts[5]), []).append(parts[6])
    out: dict[str, Detector] = {}
    for (package, case), names in sorted(cases.items()):
        if package in SL_NOT_FORMATS or not package.startswith("secretlint-rule-"):
            continue
        d = out.setdefault(package, Detector(f"secretlint/{package}"))
        inputs = [n for n in names if n.startswith("input")]
        if ".secretlintrc.json" in names or "options.ts" in names or "output.json" not in names:
            d.unread += 1
            continue
        base = f"{SL_PACKAGES}{package}/test/snapshots/{case}/"
        try:
            texts = [_blob(git_dir, commit, base + n).decode() for n in inputs]
        except UnicodeDecodeError:  # a binary key store (.p12)
            d.unread += 1
            continue
        report = json.loads(_blob(git_dir, commit, base + "output.json"))
        for text in texts:
            if not text.strip():
                continue
            # the reported values, by their ranges in the file (secretlint's offsets count
            # UTF-16 units; the inputs are ASCII where it matters)
            source = report.get("sourceContent", text)
            want = [source[m["range"][0] : m["range"][1]] for m in report["messages"]]
            given = [w for w in want if w] or ([text] if report["messages"] else [])
            d.cases.append(Case(d.detector, case, text, given))
    return list(out.values())


_APART = re.compile(r"[\s\"'`=:,;()<>]+")


def _value_of(text: str) -> list[str]:
    """A credential case's value where the test names none: its longest run between spaces,
    quotes and assignment marks (`password = "VALUE"` gives VALUE, not the word `password`)."""
    return [max(_APART.split(text), key=len) or text]


# --- detect-secrets' plugin tests -----------------------------------------------------------

_TEXT_PARAMS = ("line", "payload", "token", "secret", "content", "text")
_FLAG_PARAMS = ("should_flag", "expected", "should_be_caught", "should_match", "is_secret")


def _value(node: ast.AST, env: dict[str, Any]) -> Any:
    """A test's argument as Python would compute it, for the forms the tests write (string
    literals, module constants, `+`, `.format(...)`, slices, f-strings, `textwrap.dedent`);
    anything else raises ValueError."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [_value(e, env) for e in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _value(node.left, env) + _value(node.right, env)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _value(node.left, env) * _value(node.right, env)
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(_value(v.value, env)) if isinstance(v, ast.FormattedValue) else _value(v, env)
            for v in node.values
        )
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        s = node.slice
        bounds = [None if b is None else _value(b, env) for b in (s.lower, s.upper)]
        return _value(node.value, env)[bounds[0] : bounds[1]]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "format":
            args = [_value(a, env) for a in node.args]
            kwargs = {k.arg: _value(k.value, env) for k in node.keywords if k.arg}
            return str(_value(node.func.value, env)).format(*args, **kwargs)
        if node.func.attr == "dedent" and len(node.args) == 1:
            return textwrap.dedent(_value(node.args[0], env))
    raise ValueError(ast.dump(node)[:40])


def _parametrize(tree: ast.Module, env: dict[str, Any], d: Detector) -> None:
    for call in ast.walk(tree):
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "parametrize"
            and len(call.args) >= 2
            and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[1], ast.List | ast.Tuple)
        ):
            continue
        names = [n.strip() for n in str(call.args[0].value).split(",")]
        text_at = next((i for i, n in enumerate(names) if n in _TEXT_PARAMS), None)
        flag_at = next((i for i, n in enumerate(names) if n in _FLAG_PARAMS), None)
        if text_at is None or flag_at is None:
            continue
        for row in call.args[1].elts:
            try:
                values = _value(row, env)
                text, flag = values[text_at], values[flag_at]
            except (ValueError, TypeError, KeyError, IndexError, AttributeError):
                d.unread += 1
                continue
            if isinstance(text, str) and isinstance(flag, bool) and text.strip():
                d.cases.append(
                    Case(d.detector, names[text_at], text, _value_of(text) if flag else [])
                )
            else:
                d.unread += 1


def load_detect_secrets(git_dir: Path, commit: str = DETECT_SECRETS) -> list[Detector]:
    """One detector per plugin test file: each `pytest.mark.parametrize` table of a text and
    whether the plugin must flag it."""
    out = []
    for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit, DS_TESTS).split():
        if not path.endswith("_test.py"):
            continue
        tree = ast.parse(_git(git_dir, "show", f"{commit}:{path}"))
        env: dict[str, Any] = {}
        for stmt in tree.body:  # module constants, in order
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    try:
                        env[target.id] = _value(stmt.value, env)
                    except (ValueError, TypeError, KeyError, IndexError, AttributeError):
                        pass
        d = Detector(f"detect-secrets/{Path(path).stem}")
        _parametrize(tree, env, d)
        if d.cases or d.unread:
            out.append(d)
    return out


# --- ripsecrets' test files -------------------------------------------------------------------


def load_ripsecrets(git_dir: Path, commit: str = RIPSECRETS) -> list[Detector]:
    """`test/none` (nothing may be found: each line a false pattern), `test/one_per_line/*`
    (each line a credential) and `test/one_per_file/*` (each file one), a detector per file."""
    out = []
    for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit, "test/").split():
        text = _git(git_dir, "show", f"{commit}:{path}")
        d = Detector(f"ripsecrets/{path.removeprefix('test/')}")
        if "/one_per_file/" in f"/{path}":
            d.cases.append(Case(d.detector, path, text, _value_of(text)))
        else:
            credential = "/one_per_line/" in f"/{path}"
            for line in text.splitlines():
                if line.strip():
                    d.cases.append(
                        Case(d.detector, path, line, _value_of(line) if credential else [])
                    )
        out.append(d)
    return out


# --- semgrep-rules' test files --------------------------------------------------------------

_ANNOTATION = re.compile(r"^\s*(?:#|//|<!--|--|/\*|\*)\s*(ruleid|ok)\s*:", re.IGNORECASE)


def _semgrep_rule(path: str) -> bool:
    """A rule that reports a credential written into code or configuration: the generic
    secrets rules, and those named for a hard-coded or static credential."""
    stem = Path(path).name.split(".")[0]
    return path.startswith(SG_SECRETS) or any(w in stem for w in SG_NAMES)


def load_semgrep(git_dir: Path, commit: str = SEMGREP) -> list[Detector]:
    """One detector per rule test file: the line after each `ruleid:` annotation is a
    credential, the line after each `ok:` one a false pattern."""
    out = []
    for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit).splitlines():
        if Path(path).suffix in (".yaml", ".yml", ".md") or ".fixed." in path:
            continue
        if not _semgrep_rule(path) or path.startswith("generic/secrets/gitleaks/"):
            continue
        try:
            lines = _blob(git_dir, commit, path).decode().splitlines()
        except UnicodeDecodeError:
            continue
        d = Detector(f"semgrep/{path}")
        for i, line in enumerate(lines):
            m = _ANNOTATION.match(line)
            if m is None:
                continue
            nxt = next((t for t in lines[i + 1 :] if t.strip() and not _ANNOTATION.match(t)), None)
            if nxt is None:
                d.unread += 1
                continue
            credential = m.group(1).lower() == "ruleid"
            d.cases.append(Case(d.detector, m.group(1), nxt, _value_of(nxt) if credential else []))
        out.append(d)
    return out


# --- the tests of Sonar's language analysers' hard-coded credential checks -------------------

_SONAR_MARK = re.compile(r"(?:#|//|/\*)\s*(Noncompliant|Compliant)\b(@[+-]\d+)?")
_LITERAL = re.compile(r"\"((?:[^\"\\]|\\.)*)\"|'((?:[^'\\]|\\.)*)'")
_SONAR_CHECK = re.compile(r"hard-?coded.*(credential|password|secret)", re.IGNORECASE)


def _sonar_check_test(path: str, under: str) -> bool:
    """A test file of a check that reports a credential written into code, run with the
    check's default configuration."""
    name = Path(path).name
    return (
        path.startswith(under)
        and Path(path).suffix in (".java", ".php", ".py")
        and _SONAR_CHECK.search(name) is not None
        and "custom" not in name.lower()
    )


def load_sonar_checks(
    git_dirs: dict[str, Path],
    commits: dict[str, str] | None = None,
) -> list[Detector]:
    """One detector per test file of a hard-coded credential check of Sonar's analysers for
    Java, PHP and Python: a line marked `Noncompliant` (or the line an `@+N` offset names) is
    a credential, a line marked `Compliant` a false pattern, the text the code before the
    annotation. A mark with no code before it is not read. Read by no one here before it was
    measured: all of it is a part only reported."""
    pinned = {"java": SONAR_JAVA, "php": SONAR_PHP, "python": SONAR_PYTHON} | (commits or {})
    out = []
    for lang, git_dir in git_dirs.items():
        commit, under = pinned[lang], SONAR_CHECK_TESTS[lang]
        for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit, under).splitlines():
            if not _sonar_check_test(path, under):
                continue
            lines = _blob(git_dir, commit, path).decode(errors="replace").splitlines()
            d = Detector(f"sonar-{lang}/{path.removeprefix(under)}")
            for i, line in enumerate(lines):
                m = _SONAR_MARK.search(line)
                if m is None:
                    continue
                at = i + int(m.group(2)[1:]) if m.group(2) else i
                target = lines[at] if 0 <= at < len(lines) else ""
                if at != i:
                    cut = _SONAR_MARK.search(target)
                    target = target[: cut.start()] if cut else target
                else:
                    target = target[: m.start()]
                code = target.strip()
                if not code:
                    d.unread += 1
                    continue
                credential = m.group(1) == "Noncompliant"
                # the value a line hands the check is a string literal, its longest (the name
                # it is assigned to, `password`, is not it)
                literals = [a or b for a, b in _LITERAL.findall(code) if a or b]
                value = [max(literals, key=len)] if literals else _value_of(code)
                d.cases.append(Case(d.detector, m.group(1), code, value if credential else []))
            out.append(d)
    return out


# --- the pooled set: whispers' fixtures, IBM's detect-secrets plugin tests, DevSkim's rules ---

WHISPERS = "5832bf74dcb127128ba653ed87601c927124b5aa"
IBM_DETECT_SECRETS = "076672a9a01abdfc7ecee2e7d14f08cdccb73976"
DEVSKIM = "a452aa506f80928b611c4c7bfe306b8115821aae"
DEVSKIM_RULES = "rules/default/"
CHECKOV = "03d5fdad8d6154b1565799a7b1fb8070c158866f"
# the folders checkov's secrets runner tests (tests/secrets/test_runner.py) expect no finding in
CHECKOV_CLEAN = ("iac_fp", "non_iac_fp", "non_secrets")
CHECKOV_SANITY = "tests/secrets/sanity/"
_WORDED = re.compile(r"[A-Za-z0-9]")
_DEVSKIM_SECRET = re.compile(r"secret|credential|password|token|api.?key", re.IGNORECASE)


def _whispers_counts(tree: ast.Module) -> dict[str, int]:
    """The fixtures `test_detection_by_value` names, each with the count of values it asserts
    (every value whispers reports there holds `hardcoded`)."""
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "test_detection_by_value":
            for dec in fn.decorator_list:
                if isinstance(dec, ast.Call) and len(dec.args) >= 2:
                    table = ast.literal_eval(dec.args[1])
                    return {str(src): int(count) for src, count in table}
    return {}


def _hardcoded(line: str) -> bool:
    """A line whose value whispers' tests name a secret: it holds `hardcoded`, as text or in
    base64."""
    if "hardcoded" in line.lower():
        return True
    for run in re.findall(r"[A-Za-z0-9+/]{12,}={0,2}", line):
        try:
            if b"hardcoded" in base64.b64decode(run + "=" * (-len(run) % 4)).lower():
                return True
        except ValueError:
            continue
    return False


def load_whispers(git_dir: Path, commit: str = WHISPERS) -> list[Detector]:
    """One detector per fixture that whispers' `test_detection_by_value` names: in a fixture it
    expects nothing of (count 0), each non-empty line is a false pattern; in the others, each
    line holding `hardcoded` (the mark of every value the test accepts) is a credential, and
    the other lines are not read (another rule may report them). And the rows of
    `test_is_static` whose value whispers takes for one not written into the file (a variable,
    a placeholder), each `key: value`, false patterns."""
    tree = ast.parse(_git(git_dir, "show", f"{commit}:tests/unit/test_secrets.py"))
    out = []
    for src, count in sorted(_whispers_counts(tree).items()):
        try:
            text = _blob(git_dir, commit, f"tests/fixtures/{src}").decode()
        except (subprocess.CalledProcessError, UnicodeDecodeError):
            continue
        d = Detector(f"whispers/{src}")
        for line in text.splitlines():
            if not _WORDED.search(line):  # punctuation only: `{`, `],`
                continue
            if count == 0:
                d.cases.append(Case(d.detector, src, line, []))
            elif _hardcoded(line):
                d.cases.append(Case(d.detector, src, line, _value_of(line)))
            else:
                d.unread += 1
        out.append(d)
    d = Detector("whispers/is_static")
    for key, value, static in _whispers_static(tree):
        if static is False and isinstance(key, str) and isinstance(value, str) and value:
            d.cases.append(Case(d.detector, "is_static", f"{key}: {value}", []))
        else:
            d.unread += 1
    out.append(d)
    return out


def _whispers_static(tree: ast.Module) -> list[tuple[Any, Any, Any]]:
    """The rows of `test_is_static`: a key, a value and whether whispers takes the value for
    one written into the file (False: a variable, a placeholder, empty, not a string)."""
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "test_is_static":
            for dec in fn.decorator_list:
                if isinstance(dec, ast.Call) and len(dec.args) >= 2:
                    rows = []
                    for row in getattr(dec.args[1], "elts", []):
                        try:
                            rows.append(tuple(ast.literal_eval(row)))
                        except ValueError:
                            rows.append((None, None, None))
                    return rows
    return []


def load_ibm_detect_secrets(git_dir: Path, commit: str = IBM_DETECT_SECRETS) -> list[Detector]:
    """IBM's fork of detect-secrets: its plugin test tables, read as Yelp's are (the benchmark
    then leaves out every text an earlier set, Yelp's among them, holds)."""
    out = load_detect_secrets(git_dir, commit)
    for d in out:
        d.detector = "ibm-" + d.detector
        for c in d.cases:
            c.detector = d.detector
    return out


def load_devskim(git_dir: Path, commit: str = DEVSKIM) -> list[Detector]:
    """DevSkim's rules tagged for a secret, credential, password, token or API key: each
    rule's `must-match` texts are credentials, its `must-not-match` texts false patterns."""
    out = []
    for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit, DEVSKIM_RULES).split():
        if not path.endswith(".json"):
            continue
        rules = json.loads(_blob(git_dir, commit, path))
        d = Detector(f"devskim/{Path(path).stem}")
        for rule in rules if isinstance(rules, list) else []:
            if not _DEVSKIM_SECRET.search(" ".join(rule.get("tags") or [])):
                continue
            for text in rule.get("must-match") or []:
                d.cases.append(Case(d.detector, rule["id"], text, _value_of(text)))
            for text in rule.get("must-not-match") or []:
                d.cases.append(Case(d.detector, rule["id"], text, []))
        if d.cases:
            out.append(d)
    return out


def load_checkov(git_dir: Path, commit: str = CHECKOV) -> list[Detector]:
    """The files of the folders in which checkov's secrets runner tests expect no finding
    (`sanity/iac_fp`, `sanity/non_iac_fp`, `sanity/non_secrets`): each non-empty line a false
    pattern, a detector per file."""
    out = []
    for folder in CHECKOV_CLEAN:
        under = f"{CHECKOV_SANITY}{folder}/"
        for path in _git(git_dir, "ls-tree", "-r", "--name-only", commit, under).splitlines():
            d = Detector(f"checkov/{path.removeprefix(CHECKOV_SANITY)}")
            for line in _blob(git_dir, commit, path).decode(errors="replace").splitlines():
                if _WORDED.search(line):  # not punctuation only: `{`, `],`
                    d.cases.append(Case(d.detector, folder, line, []))
            out.append(d)
    return out


def load_pooled(dirs: dict[str, Path]) -> list[Detector]:
    """The sources given (`whispers`, `ibm-detect-secrets`, `devskim`, `checkov`), pooled as
    one set."""
    loaders = {
        "whispers": load_whispers,
        "ibm-detect-secrets": load_ibm_detect_secrets,
        "devskim": load_devskim,
        "checkov": load_checkov,
    }
    return [d for name, git_dir in dirs.items() for d in loaders[name](git_dir)]
