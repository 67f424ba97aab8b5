"""Splitting a module must not change what it does: the split modules against the same files at
a commit before the split (default 9ea544e), on the note corpus, the repository's docs, config
tables and environments, and LoCoMo queries.

    python benchmarks/split_equivalence.py ../shared/data/notes \
        ../shared/data/locomo/locomo-dev.json [--before 9ea544e] [--skip-queries]

parse: every unit of every note (LF, CRLF, tabs, random cuts); document: note_facts, references,
section_of, is_claim, comparable; config: decode, environment, load_settings, described, the
JSON schema; pipeline: results and explain of 4 configurations x 4 depths x 40 questions.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import random
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(HERE.parent))


def _old(before: str, path: str, name: str, tmp: Path, renames: dict[str, str] | None = None):
    """The module at `path` as of commit `before`, loaded as `name` (its imports of modules
    that were split renamed to their old copies: `renames`)."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{before}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for was, now in (renames or {}).items():
        source = source.replace(f"from {was} import", f"from {now} import")
    file = tmp / f"{name}.py"
    file.write_text(source)
    spec = importlib.util.spec_from_file_location(name, file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _texts(notes: Path) -> list[tuple[str, str]]:
    files = sorted(notes.rglob("*.md")) + sorted((ROOT / "docs").rglob("*.md"))
    return [(str(p), p.read_text(errors="replace")) for p in files]


def check_parse(old, texts: list[tuple[str, str]]) -> str:
    from memls.notes import parse

    variants = [t for _, t in texts] + [(ROOT / "README.md").read_text()]
    rng = random.Random(0)
    extra = []
    for t in variants:
        extra += [t.replace("\n", "\r\n"), t.replace("    ", "\t")]
        for _ in range(3):
            a = rng.randrange(len(t) + 1)
            extra.append(t[a : a + 3000])
    variants += extra
    units = 0
    for t in variants:
        a = [msgspec.structs.asdict(u) for u in old.parse(t)]
        b = [msgspec.structs.asdict(u) for u in parse(t)]
        assert a == b, t[:200]
        units += len(a)
    return f"parse: {len(variants)} texts, {units} units, identical"


def check_document(old, texts: list[tuple[str, str]]) -> str:
    from memls.notes import document, parse, references, sections

    paths = [p for p, _ in texts]
    facts = refs = units = 0
    for path, text in texts:
        for variant in (text, text.replace("\n", "\r\n")):
            a, b = old.note_facts(variant, path), document.note_facts(variant, path)
            assert msgspec.to_builtins(a) == msgspec.to_builtins(b), path
            facts += 1
            for ref in (*b.superseded_by, *b.supersedes, *b.amended_by, *b.amends, *b.see):
                before = old.resolve_ref(old.Ref(**msgspec.structs.asdict(ref)), path, paths)
                assert before == references.resolve_ref(ref, path, paths)
                refs += 1
            assert old.note_number(path) == references.note_number(path)
            for u in parse(variant):
                heads = tuple(h for h in u.heading.split(" > ") if h)
                for titled in (False, True):
                    assert old.section_of(heads, titled=titled) == sections.section_of(
                        heads, titled=titled
                    )
                for block in ("para", "item", "table", "code"):
                    for sec in ("", "context", "decision", "status", "update"):
                        assert old.is_claim(u.text, block=block, section=sec) == sections.is_claim(
                            u.text, block=block, section=sec
                        )
                units += 1
            lines = variant.splitlines()
            for i in range(0, len(lines), 7):
                for j in range(i, len(lines), 11):
                    for kind in ("", "update", "decision"):
                        assert old.comparable((i, kind), (j, ""), a) == document.comparable(
                            (i, kind), (j, ""), b
                        )
    return (
        f"document: {facts} note texts (LF and CRLF), note_facts identical; {refs} references "
        f"resolved identically; {units} units, section_of and is_claim identical"
    )


def _outcome(fn, *args):
    from memls.errors import MemlsError

    try:
        r = fn(*args)
    except MemlsError as e:
        return ("err", type(e).__name__, str(e), getattr(e, "field", None))
    if isinstance(r, Path) or r is None:
        return ("ok", str(r))
    return ("ok", dataclasses.asdict(r) if dataclasses.is_dataclass(r) else msgspec.to_builtins(r))


def check_config(old) -> str:
    from memls import config as new

    values = ["x", "", "http://h:1", 0, -1, 1, 3, 1.5, 0.5, 200, 201, True, False, 10**12]
    values += [float("nan"), float("inf"), [], {}, {"a": 1}]
    raws: list[dict] = [{}, {"nope": {"x": 1}}]
    for name, struct in old.sections().items():
        raws += [{name: 5}, {name: {}}, {name + "s": {}}]
        for key in struct.__struct_fields__:
            raws += [{name: {key: v}} for v in values]
            raws += [{name: {key + "x": 1}}, {key: 1}]
    for raw in raws:
        assert _outcome(old.decode, raw, "c.toml") == _outcome(new.decode, raw, "c.toml"), raw
    envs: list[dict[str, str]] = [{}]
    words = ["", " ", "1", "0", "yes", "off", "maybe", "http://127.0.0.1:8000", "ftp://x", "/tmp/x"]
    for f in old.Environment.__struct_fields__:
        envs += [{old.env_name(f): v} for v in words]
    for env in envs:
        assert _outcome(old.environment, env) == _outcome(new.environment, env), env
        assert _outcome(old.model_cache_dir, env) == _outcome(new.model_cache_dir, env), env
    owners = [*zip(old.sections().values(), new.sections().values())]
    for a, b in [*owners, (old.Environment, new.Environment)]:
        assert [tuple(r) for r in old.described(a)] == [tuple(r) for r in new.described(b)]
    assert msgspec.json.schema(old.ConfigFile) == msgspec.json.schema(new.ConfigFile)
    tomls = [
        "",
        "[retrieval]\nrerank_depth = 5\ncache = false\n",
        "[models]\nrerank = false\n",
        "[ttl_days]\nnote = 30\n",
        "[limits]\nmax_content_bytes = 2048\n",
        "[index]\nvectors = false\nchroma_url = 'http://localhost:8000'\n",
        "[bad\n",
        "[retrieval]\nrerank_depth = 0\n",
    ]
    loads = 0
    for text in tomls:
        for env in ({}, {"MEMLS_RERANK": "0"}, {"MEMLS_CHROMA_URL": "http://127.0.0.1:9"}):
            with tempfile.TemporaryDirectory() as d:
                Path(d, "config.toml").write_text(text)
                a = _outcome(old.load_settings, Path(d), env)
                assert a == _outcome(new.load_settings, Path(d), env), (text, env)
                loads += 1
    return (
        f"config: decode of {len(raws)} tables, {len(envs)} environments (and model_cache_dir), "
        f"described rows of {len(owners) + 1} owners, {loads} load_settings, the JSON schema: "
        "identical"
    )


def check_pipeline(old, locomo: Path) -> str:
    from corpus import project_items, questions
    from latency import params_for
    from memls import protocol as p
    from memls.engine import Engine
    from memls.retrieval import pipeline as new

    sample = json.loads(locomo.read_text())[0]
    project = sample["sample_id"]
    asked = [qa["question"] for qa in questions(sample)][:40]
    n = 0
    with tempfile.TemporaryDirectory() as tmp, Engine.open(tmp, front="bench", cache=False) as e:
        for item in project_items(sample, 800):
            e.store(item.params(project))
        assert e.flush(timeout=3600)
        base = e.retrieval
        configs = [
            base,
            dataclasses.replace(base, rerank_blend=0.3, lift_seeds=5, rerank_depth=8),
            dataclasses.replace(base, rerank_mode="rrf", fusion="rrf", rerank_depth=5),
            dataclasses.replace(
                base, rerank_mode="replace", rerank_start=4, rerank_depth=4, lift_seeds=3
            ),
        ]
        for config in configs:
            for depth in ("lexical", "none", "interactive", "default"):
                for q in asked:
                    seen = e.visibility(project, valid_at=None, as_of=None, include_user=False)
                    params = params_for(p, depth, query=q, project=project, explain=True, k=10)
                    got = []
                    for module in (old, new):
                        r = module.Retriever(e.storage.search, e.index, e.models, config)
                        found = msgspec.to_builtins(r.search(params, seen))
                        found.pop("tookMs", None)
                        found.pop("took_ms", None)
                        got.append(found)
                    assert got[0] == got[1], (depth, q)
                    n += 1
    return (
        f"pipeline: {n} queries ({len(configs)} configurations x 4 depths x {len(asked)} "
        "questions, 800 memories of LoCoMo's first dev conversation), results and explain identical"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notes", type=Path)
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--before", default="9ea544e")
    parser.add_argument("--skip-queries", action="store_true")
    args = parser.parse_args()
    print(
        "# " + shlex.join(["python", "benchmarks/split_equivalence.py", *sys.argv[1:]]), flush=True
    )
    texts = _texts(args.notes)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        doc = _old(args.before, "server/memls/notes/document.py", "old_doc", tmp)
        split = {"memls.notes.document": "old_doc"}  # the old parser reads the old document
        parse = _old(args.before, "server/memls/notes/parse.py", "old_parse", tmp, split)
        print(check_parse(parse, texts), flush=True)
        print(check_document(doc, texts), flush=True)
        print(check_config(_old(args.before, "server/memls/config.py", "old_config", tmp)))
        if not args.skip_queries:
            old = _old(args.before, "server/memls/retrieval/pipeline.py", "old_pipeline", tmp)
            print(check_pipeline(old, args.locomo))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
