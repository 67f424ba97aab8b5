"""gitleaks' own labelled examples as a corpus: every rule's `tps` (true positives) and `fps`
(false positives) in `cmd/generate/config/rules/*.go` of a gitleaks checkout at a pinned commit.
Nothing of gitleaks is kept in this repository: the corpus is rebuilt from the snapshot each run.

The lists are Go expressions. They are read by a small evaluator of the Go subset they use:
string literals, `+`, `[]string{...}`, `append(xs, ys...)`, local variables, `fmt.Sprintf`,
`strings.ToUpper`/`Repeat`, gitleaks' `utils` helpers (`Numeric("32")` and the other
pattern builders, `GenerateSampleSecret`, `GenerateSampleSecrets` with the templates read
from `utils/generate.go`, sorted by name) and `secrets.NewSecret(regex)`, which draws one
string matching the regex from a generator seeded with the rule id and the draw's number, so
a run is the same on every machine. An element the evaluator cannot read (a loop, a byte
conversion) is left out and counted.

Each rule is put in one of two halves by the first byte of sha256(rule id): even is the
development half, odd the held-out half.
"""

from __future__ import annotations

import hashlib
import random
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PINNED = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"
RULES = "cmd/generate/config/rules"
GENERATE = "cmd/generate/config/utils/generate.go"


def half(rule_id: str) -> str:
    return "dev" if hashlib.sha256(rule_id.encode()).digest()[0] % 2 == 0 else "held-out"


# --- Go tokens -------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"(?P<ws>[ \t\r]+)|(?P<nl>\n)|(?P<lc>//[^\n]*)|(?P<bc>/\*.*?\*/)"
    r'|(?P<raw>`[^`]*`)|(?P<str>"(?:\\.|[^"\\\n])*")|(?P<chr>\'(?:\\.|[^\'\\\n])+\')'
    r"|(?P<num>\d+(?:\.\d+)?)|(?P<id>[A-Za-z_]\w*)"
    r"|(?P<op>\.\.\.|:=|\+=|==|!=|<=|>=|&&|\|\||[-+*/%&|^<>=!(){}\[\],;:.])",
    re.S,
)
_ENDS = {"id", "raw", "str", "chr", "num"}


@dataclass
class Tok:
    kind: str
    text: str


def tokens(src: str) -> list[Tok]:
    out: list[Tok] = []
    at = 0
    while at < len(src):
        m = _TOKEN.match(src, at)
        if m is None:
            at += 1
            continue
        at = m.end()
        kind = m.lastgroup or ""
        text = m.group()
        if kind in ("ws", "lc"):
            continue
        if kind == "bc":
            kind, text = ("nl", "\n") if "\n" in text else ("ws", "")
            if kind == "ws":
                continue
        if kind == "nl":
            last = out[-1] if out else None
            if last and (
                last.kind in _ENDS
                and last.text not in ("func",)
                or last.text in (")", "]", "}", "return", "break", "continue")
            ):
                out.append(Tok("op", ";"))
            continue
        out.append(Tok(kind, text))
    return out


_ESC = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'", "a": "\a", "0": "\0"}


def go_string(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1].replace("\r", "")
    body = text[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        n = body[i + 1]
        if n == "x":
            out.append(chr(int(body[i + 2 : i + 4], 16)))
            i += 4
        elif n == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        elif n in _ESC:
            out.append(_ESC[n])
            i += 2
        else:
            raise Unreadable(f"escape \\{n}")
    return "".join(out)


class Unreadable(Exception):
    pass


# --- strings from a regex ------------------------------------------------------------------


def draw(pattern: str, rng: random.Random) -> str:
    """One string that `pattern` (Go RE2 syntax, as gitleaks writes it) matches."""
    from re import _parser as sre  # type: ignore[attr-defined]

    py = pattern.replace(r"\z", r"\Z")
    py = re.sub(r"\(\?[a-z]+\)", "", py)  # inline flags: case does not matter to a draw
    py = py.replace("[[:alnum:]]", "[A-Za-z0-9]").replace("[:alnum:]", "A-Za-z0-9")
    tree = sre.parse(py)
    printable = [chr(c) for c in range(33, 127)]
    return _emit(tree, rng, printable, sre)


def _emit(items: Any, rng: random.Random, printable: list[str], sre: Any) -> str:
    C = sre  # constants live on the parser module
    out: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "NOT_LITERAL":
            out.append(rng.choice([c for c in printable if ord(c) != av]))
        elif name == "ANY":
            out.append(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789"))
        elif name == "IN":
            out.append(rng.choice(_class(av, printable)))
        elif name == "CATEGORY":
            out.append(rng.choice(_class([(op, av)], printable)))
        elif name == "BRANCH":
            out.append(_emit(rng.choice(av[1]), rng, printable, C))
        elif name == "SUBPATTERN":
            out.append(_emit(av[-1], rng, printable, C))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            hi = lo + 8 if hi == C.MAXREPEAT else hi
            n = rng.randint(lo, hi)
            out.extend(_emit(sub, rng, printable, C) for _ in range(n))
        elif name in ("AT", "ASSERT", "ASSERT_NOT"):
            continue
        else:
            raise Unreadable(f"regex {name}")
    return "".join(out)


_CATS = {
    "CATEGORY_DIGIT": "0123456789",
    "CATEGORY_WORD": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    "CATEGORY_SPACE": " ",
}


def _class(av: Any, printable: list[str]) -> list[str]:
    chars: set[str] = set()
    negate = False
    for op, val in av:
        name = str(op)
        if name == "NEGATE":
            negate = True
        elif name == "LITERAL":
            chars.add(chr(val))
        elif name == "RANGE":
            chars.update(chr(c) for c in range(val[0], val[1] + 1))
        elif name == "CATEGORY":
            if str(val) not in _CATS:
                raise Unreadable(f"class {val}")
            chars.update(_CATS[str(val)])
    if negate:
        return [c for c in printable if c not in chars]
    return sorted(chars)


# --- the Go subset -------------------------------------------------------------------------


class Parser:
    def __init__(self, toks: list[Tok], at: int = 0) -> None:
        self.t = toks
        self.i = at

    def peek(self, k: int = 0) -> Tok:
        return self.t[self.i + k] if self.i + k < len(self.t) else Tok("eof", "")

    def take(self, text: str | None = None) -> Tok:
        tok = self.peek()
        if text is not None and tok.text != text:
            raise Unreadable(f"expected {text!r}, got {tok.text!r}")
        self.i += 1
        return tok

    def skip_newlines(self) -> None:
        while self.peek().text == ";":
            self.i += 1

    # expressions become closures over an environment, so an unreadable element costs only
    # itself
    def expr(self) -> Any:
        left = self.unary()
        while self.peek().text == "+":
            self.take()
            right = self.unary()
            left = ("+", left, right)
        return left

    def unary(self) -> Any:
        tok = self.peek()
        if tok.kind in ("str", "raw"):
            self.take()
            node: Any = ("lit", go_string(tok.text))
        elif tok.kind == "num":
            self.take()
            node = ("lit", int(float(tok.text)))
        elif tok.text == "(":
            self.take()
            node = self.expr()
            self.take(")")
        elif tok.text == "[":
            node = self.composite()
        elif tok.kind == "id" and tok.text == "map":
            node = self.composite()
        elif tok.text == "{":
            node = self.braced()
        elif tok.kind == "id":
            self.take()
            name = tok.text
            while self.peek().text == "." and self.peek(1).kind == "id":
                self.take()
                name += "." + self.take().text
            node = ("var", name)
            while self.peek().text in ("(", "["):
                if self.peek().text == "(":
                    self.take()
                    args, spread = self.args(")")
                    node = ("call", name, args, spread)
                else:
                    self.take()
                    index = self.expr()
                    self.take("]")
                    node = ("index", node, index)
        elif tok.text in ("&", "*", "-"):
            self.take()
            node = ("opaque", self.unary())
        else:
            raise Unreadable(f"token {tok.text!r}")
        while self.peek().text == "." and self.peek(1).kind == "id":
            self.take()
            method = self.take().text
            if self.peek().text == "(":
                self.take()
                args, spread = self.args(")")
                node = ("method", node, method, args)
        return node

    def args(self, close: str) -> tuple[list[Any], bool]:
        out: list[Any] = []
        spread = False
        self.skip_newlines()
        while self.peek().text != close:
            start = self.i
            try:
                out.append(self.expr())
            except Unreadable as e:
                self.i = start
                self.skip_balanced(close)
                out.append(("bad", str(e)))
            if self.peek().text == "...":
                self.take()
                spread = True
            if self.peek().text == ":":  # a key: value pair (maps, structs)
                self.take()
                key = out.pop()
                try:
                    value = self.expr()
                except Unreadable as e:
                    self.skip_balanced(close)
                    value = ("bad", str(e))
                out.append(("kv", key, value))
            self.skip_newlines()
            if self.peek().text == ",":
                self.take()
            self.skip_newlines()
        self.take(close)
        return out, spread

    def skip_balanced(self, close: str) -> None:
        depth = 0
        while True:
            t = self.peek().text
            if t in ("(", "[", "{"):
                depth += 1
            elif t in (")", "]", "}"):
                if depth == 0:
                    return
                depth -= 1
            elif t == "," and depth == 0:
                return
            elif self.peek().kind == "eof":
                return
            self.take()

    def composite(self) -> Any:
        # a type ([]string, map[string]string, [][]string ...) then {elements}
        depth = 0
        typ = ""
        while True:
            t = self.peek()
            if t.kind == "eof":
                raise Unreadable("unfinished composite")
            if t.text == "(" and depth == 0:  # a conversion: []byte(s)
                self.take()
                args, spread = self.args(")")
                return ("call", typ, args, spread)
            if t.text == "{" and depth == 0:
                break
            if t.text == "[":
                depth += 1
            elif t.text == "]":
                depth -= 1
            typ += t.text
            self.take()
        items = self.braced()
        return ("list" if typ.startswith("[]") else "map", typ, items[1])

    def braced(self) -> Any:
        self.take("{")
        items, _ = self.args("}")
        return ("items", items)


@dataclass
class Rule:
    rule_id: str
    file: str
    tps: list[str] = field(default_factory=list)
    fps: list[str] = field(default_factory=list)
    unread: int = 0


class Evaluator:
    def __init__(
        self, rule_id: str, templates: dict[str, str], stopwords: tuple[str, ...] = ()
    ) -> None:
        self.rule_id = rule_id
        self.templates = templates
        self.stopwords = stopwords
        self.draws = 0
        self.env: dict[str, Any] = {}
        self.unread = 0

    def rng(self) -> random.Random:
        self.draws += 1
        return random.Random(f"{self.rule_id}:{self.draws}")

    def ev(self, node: Any) -> Any:
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "+":
            a, b = self.ev(node[1]), self.ev(node[2])
            if isinstance(a, str) and isinstance(b, str):
                return a + b
            raise Unreadable("+ on non-strings")
        if kind == "var":
            if node[1] in self.env:
                return self.env[node[1]]
            if node[1] == "nil":
                return []
            raise Unreadable(f"name {node[1]}")
        if kind == "list":
            out: list[Any] = []
            for item in node[2]:
                if item[0] == "items":  # [][]string{{...}}
                    out.append([self.ev(x) for x in item[1]])
                    continue
                try:
                    out.append(self.ev(item))
                except Unreadable:
                    self.unread += 1
            return out
        if kind == "map":
            return {self.ev(kv[1]): self.ev(kv[2]) for kv in node[2] if kv[0] == "kv"}
        if kind == "call":
            return self.call(node[1], node[2], node[3])
        if kind == "index":
            return self.ev(node[1])[self.ev(node[2])]
        raise Unreadable(kind)

    def call(self, name: str, args: list[Any], spread: bool) -> Any:
        if name == "append":
            base = list(self.ev(args[0]))
            if spread:
                for a in args[1:-1]:
                    base.append(self.ev(a))
                base.extend(self.ev(args[-1]))
            else:
                for a in args[1:]:
                    try:
                        base.append(self.ev(a))
                    except Unreadable:
                        self.unread += 1
            return base
        vals = [self.ev(a) for a in args]
        if name in _PATTERNS:
            return _PATTERNS[name].format(*vals)
        if name == "utils.Hex8_4_4_4_12":
            return r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name == "secrets.NewSecret":
            return draw(vals[0], self.rng())
        if name == "newPlausibleSecret":  # generic.go: a digit, and no stop word
            for _ in range(1000):
                secret = draw(vals[0], self.rng())
                low = secret.lower()
                if re.search("[1-9]", secret) and not any(w in low for w in self.stopwords):
                    return secret
            raise Unreadable("no plausible secret")
        if name == "utils.GenerateSampleSecret":
            return f'{vals[0]}_api_token = "{vals[1]}"'
        if name == "utils.GenerateSampleSecrets":
            i, s = vals
            return [
                t.replace("{i}", i).replace("{I}", i.upper()).replace("{s}", s)
                for _, t in sorted(self.templates.items())
            ]
        if name == "fmt.Sprintf":
            fmt = re.sub(r"%[-+# 0]*\d*[svdq]", "%s", vals[0].replace("%%", "\0"))
            return (fmt % tuple(vals[1:])).replace("\0", "%")
        if name == "[]byte":
            return vals[0]
        if name.endswith("Encoding.EncodeToString"):
            return _b64(name.rsplit(".", 2)[-2], vals[0])
        if name == "strings.ToUpper":
            return vals[0].upper()
        if name == "strings.ToLower":
            return vals[0].lower()
        if name == "strings.Repeat":
            return vals[0] * vals[1]
        raise Unreadable(f"call {name}")


def _b64(encoding: str, text: str) -> str:
    import base64

    raw = text.encode("latin-1")
    out = (base64.urlsafe_b64encode if "URL" in encoding else base64.b64encode)(raw).decode()
    return out.rstrip("=") if encoding.startswith("Raw") else out


_PATTERNS = {
    "utils.Numeric": "[0-9]{{{}}}",
    "utils.Hex": "[a-f0-9]{{{}}}",
    "utils.AlphaNumeric": "[a-z0-9]{{{}}}",
    "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{{{}}}",
    "utils.AlphaNumericExtended": r"[a-z0-9=_\-]{{{}}}",
    "utils.AlphaNumericExtendedLong": r"[a-z0-9\/=_\+\-]{{{}}}",
}


def _templates(src: str) -> dict[str, str]:
    toks = tokens(src)
    at = next(i for i, t in enumerate(toks) if t.text == "samples")
    p = Parser(toks, at + 2)  # samples :=
    node = p.expr()
    ev = Evaluator("templates", {})
    return {ev.ev(kv[1]): ev.ev(kv[2]) for kv in node[2] if kv[0] == "kv"}


def _stopwords(src: str) -> tuple[str, ...]:
    toks = tokens(src)
    at = next((i for i, t in enumerate(toks) if t.text == "DefaultStopWords"), None)
    if at is None:
        return ()
    while toks[at].text != "=":
        at += 1
    return tuple(Evaluator("stopwords", {}).ev(Parser(toks, at + 1).expr()))


def _functions(toks: list[Tok]) -> list[tuple[str, int, int]]:
    """(name, first token of the body, end) of each top-level func."""
    out = []
    i = 0
    while i < len(toks):
        if toks[i].text == "func" and toks[i + 1].kind == "id":
            name = toks[i + 1].text
            j = i + 2
            while toks[j].text != "{":
                j += 1
            depth = 0
            k = j
            while True:
                if toks[k].text == "{":
                    depth += 1
                elif toks[k].text == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            out.append((name, j + 1, k))
            i = k
        i += 1
    return out


def _rule_id(toks: list[Tok], start: int, end: int) -> str | None:
    for i in range(start, end - 2):
        named = toks[i].text == "RuleID" and toks[i + 1].text in (":", "=")
        if named and toks[i + 2].kind == "str":
            return go_string(toks[i + 2].text)
    return None


def _statements(toks: list[Tok], start: int, end: int) -> list[tuple[str, str, int]]:
    """(target, operator, first token of the value) of each top-level `x := v` / `x = v` /
    `var x = v` in a function body (nested blocks are skipped: loops are not read)."""
    out = []
    depth = 0
    i = start
    line_start = True
    while i < end:
        t = toks[i]
        if t.text in ("{", "(", "["):
            depth += 1
        elif t.text in ("}", ")", "]"):
            depth -= 1
        elif t.text == ";" and depth == 0:
            line_start = True
            i += 1
            continue
        if line_start and depth == 0:
            j = i
            if toks[j].text == "var":
                j += 1
            if toks[j].kind == "id" and toks[j + 1].text in (":=", "="):
                out.append((toks[j].text, toks[j + 1].text, j + 2))
            elif toks[j].kind == "id" and toks[j + 1].kind == "id" and toks[j + 2].text == "=":
                out.append((toks[j].text, "=", j + 3))  # var x T = v
            elif toks[j].text == "for":
                pass
        line_start = False
        i += 1
    return out


def read_rules(source: dict[str, str]) -> list[Rule]:
    """Every rule's lists from {path: Go source} (the rules directory and generate.go)."""
    templates = _templates(source[GENERATE])
    stopwords = _stopwords(source.get(f"{RULES}/stopwords.go", ""))
    rules: list[Rule] = []
    for path in sorted(p for p in source if p.startswith(RULES) and p.endswith(".go")):
        toks = tokens(source[path])
        for _name, start, end in _functions(toks):
            rule_id = _rule_id(toks, start, end)
            if rule_id is None:
                continue
            ev = Evaluator(rule_id, templates, stopwords)
            for target, _, at in _statements(toks, start, end):
                try:
                    ev.env[target] = ev.ev(Parser(toks, at).expr())
                except (Unreadable, IndexError, KeyError, TypeError, ValueError):
                    if target in ("tps", "fps"):
                        ev.unread += 1
                    ev.env.pop(target, None)
            rule = Rule(rule_id, Path(path).name, unread=ev.unread)
            for key in ("tps", "fps"):
                values = ev.env.get(key, [])
                if isinstance(values, dict):  # ValidateWithPaths: {path: content}
                    values = list(values.values())
                if isinstance(values, list):
                    getattr(rule, key).extend(v for v in values if isinstance(v, str) and v)
                elif values:
                    rule.unread += 1
            if rule.tps or rule.fps:
                rules.append(rule)
    return rules


def load(git_dir: Path, commit: str = PINNED) -> list[Rule]:
    """The rules of the gitleaks snapshot in `git_dir` (a clone or a bare repository) at
    `commit`."""
    names = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit, RULES],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    source = {}
    for name in [*names, GENERATE]:
        source[name] = subprocess.run(
            ["git", f"--git-dir={git_dir}", "show", f"{commit}:{name}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return read_rules(source)
