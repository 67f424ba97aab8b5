"""Every agent's instruction files, found by the owner's note watcher in a watched project:
nested ones in a monorepo, Claude Code's imports, Codex's override, each with the scope its
folder or front matter gives; nothing from an ignored folder; scoped rules of sibling folders
never a contradiction, and given for the files they cover."""

from __future__ import annotations

from pathlib import Path

from pygls import uris

from daemon_helpers import Heard
from memls import protocol as p
from memls.daemon import open_engine

FILES = {
    "AGENTS.md": "- Run `make test` before every push.\n",
    "services/api/AGENTS.md": "- The API answers in JSON only.\n",
    "services/billing/AGENTS.md": "- Billing talks to Stripe through the gateway.\n",
    "services/billing/AGENTS.override.md": "- Billing changes need a second reviewer.\n",
    "CLAUDE.md": "@AGENTS.md\n",
    "CLAUDE.local.md": "- Open pull requests as drafts.\n\n@docs/style.md\n",
    "docs/style.md": "- Prefer early returns over nested branches.\n",
    ".claude/CLAUDE.md": "- Keep commits small.\n",
    ".claude/rules/testing.md": '---\npaths:\n  - "tests/**/*.py"\n---\n- Use pytest fixtures.\n',
    "GEMINI.md": "- Explain each shell command before running it.\n",
    "packages/ui/GEMINI.md": "- Components are function components.\n",
    ".github/copilot-instructions.md": "- Write docstrings for public functions.\n",
    ".github/instructions/ts.instructions.md": (
        '---\napplyTo: "**/*.ts,**/*.tsx"\n---\n- Use strict TypeScript.\n'
    ),
    ".cursor/rules/react.mdc": (
        "---\ndescription: React\nglobs: **/*.tsx\nalwaysApply: false\n---\n"
        "- Name hooks useSomething.\n"
    ),
    ".cursorrules": "- Never commit secrets.\n",
    ".windsurf/rules/go.md": "---\ntrigger: glob\nglobs: '**/*.go'\n---\n- Run gofmt on save.\n",
    ".windsurfrules": "- Log with structured fields.\n",
    ".clinerules/docs.md": "- Update the changelog with each feature.\n",
    ".kiro/steering/tech.md": "---\ninclusion: always\n---\n- The backend is Python 3.12.\n",
    ".junie/guidelines.md": "- Migrations are reversible.\n",
    "AGENT.md": "- The build uses Bazel.\n",
    ".rules": "- Prefer composition over inheritance.\n",
    "doc/adr/0001-record-architecture-decisions.md": (
        "# 1. Record architecture decisions\n\n## Decision\n\nWe record decisions as ADRs.\n"
    ),
    "docs/decisions/0002-queue.md": "# 2. Queue\n\n## Decision\n\nWe use RabbitMQ.\n",
    # never read: an ignored folder and one .gitignore names
    "node_modules/pkg/AGENTS.md": "- A dependency's own rule.\n",
    "generated/AGENTS.md": "- A generated rule.\n",
    ".gitignore": "generated/\n",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _memories(engine, project: str) -> dict[str, p.Memory]:
    listed = engine.list(p.ListParams(project=project, status="active", limit=1000)).memories
    return {m.content: m for m in listed}


def _rel(uri: str, root: Path) -> str:
    return Path(uris.to_fs_path(uri)).relative_to(root).as_posix()


def test_every_agents_file_is_read_once_with_its_scope_and_nothing_ignored(tmp_path: Path):
    root = tmp_path / "mono"
    _write(root, FILES)
    project = str(root)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        result = engine.watch(p.WatchParams(project=project, wait=60))
        assert result.indexed
        notes = {_rel(n.uri, root): n for n in result.notes}
        memories = _memories(engine, project)

        # every line of every agent's file, once (CLAUDE.md only imports AGENTS.md)
        for name, text in FILES.items():
            if (
                name in ("CLAUDE.md", ".gitignore")
                or name.endswith("/AGENTS.md")
                and (name.startswith(("node_modules", "generated", "services/billing")))
            ):
                continue
            line = [x for x in text.splitlines() if x.startswith("- ") or x.startswith("We ")]
            line = line[-1].removeprefix("- ")
            assert line in memories, f"{name}: {line!r} not read"
        assert "@AGENTS.md" not in memories
        assert notes["AGENTS.md"].imported_by == [uris.from_fs_path(str(root / "CLAUDE.md"))]

        # an ignored folder, and one .gitignore names, are never read
        assert "A dependency's own rule." not in memories
        assert "A generated rule." not in memories
        assert not any(n.startswith(("node_modules/", "generated/")) for n in notes)

        # Codex reads the override of a folder, not its AGENTS.md: said on that file
        assert "Billing changes need a second reviewer." in memories
        assert "Billing talks to Stripe through the gateway." not in memories
        shadowed = uris.from_fs_path(str(root / "services/billing/AGENTS.md"))
        assert any(w.uri == shadowed and "AGENTS.override.md" in w.message for w in result.warnings)

        # who wrote each, and which files its lines apply to
        assert notes["services/api/AGENTS.md"].origin == "Codex AGENTS.md"
        assert notes[".windsurfrules"].origin == "Windsurf (legacy .windsurfrules)"
        assert notes["docs/style.md"].origin == "Claude Code (local) import"
        assert notes["doc/adr/0001-record-architecture-decisions.md"].kind == "record"
        scopes = {
            "The API answers in JSON only.": ["services/api/**"],
            "Components are function components.": ["packages/ui/**"],
            "Use pytest fixtures.": ["tests/**/*.py"],
            "Use strict TypeScript.": ["**/*.ts", "**/*.tsx"],
            "Name hooks useSomething.": ["**/*.tsx"],
            "Run gofmt on save.": ["**/*.go"],
            "The backend is Python 3.12.": [],
            "Run `make test` before every push.": [],
            "Prefer early returns over nested branches.": [],
        }
        for text, scope in scopes.items():
            assert memories[text].scope == scope, text

        # the owner says what an editor's buffer is: no note outside its table
        for name in ("README.md", "node_modules/pkg/AGENTS.md", "services/billing/AGENTS.md"):
            uri = uris.from_fs_path(str(root / name))
            answer = engine.sync_note(p.SyncNoteParams(uri=uri, text="- x\n", project=project))
            assert answer.note is False, name
        assert "x" not in _memories(engine, project)


SCOPED = {
    "services/web/AGENTS.md": "- Indent with 4 spaces.\n",
    "services/api/AGENTS.md": "- Indent with 2 spaces.\n",
}
UNSCOPED = {
    "AGENTS.md": "- Indent with 4 spaces.\n",
    "GEMINI.md": "- Indent with 2 spaces.\n",
}


def _pairs(engine, project: str) -> list[tuple[str, str]]:
    found = engine.conflicts(p.ConflictsParams(project=project, status="open")).conflicts
    return sorted(tuple(sorted((c.newer.content, c.older.content))) for c in found)


def test_rules_of_sibling_folders_are_no_contradiction_and_the_same_unscoped_are(
    tmp_path: Path,
):
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        for name, files in (("scoped", SCOPED), ("unscoped", UNSCOPED)):
            root = tmp_path / name
            _write(root, files)
            assert engine.watch(p.WatchParams(project=str(root), wait=60)).indexed
        assert engine.flush(120)
        assert _pairs(engine, str(tmp_path / "scoped")) == []
        assert _pairs(engine, str(tmp_path / "unscoped")) == [
            ("Indent with 2 spaces.", "Indent with 4 spaces.")
        ]


def test_the_briefing_and_recall_for_a_file_give_the_rules_that_cover_it(tmp_path: Path):
    root = tmp_path / "mono"
    _write(root, {**SCOPED, "AGENTS.md": "- Run `make test` before every push.\n"})
    project = str(root)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        assert engine.watch(p.WatchParams(project=project, wait=60)).indexed
        briefing = engine.context(
            p.ContextParams(project=project, paths=["services/api/app.py"], budget=2000)
        )
        given = {e.memory.content: e.memory.scope for e in briefing.entries}
        assert given["Indent with 2 spaces."] == ["services/api/**"]
        assert given["Run `make test` before every push."] == []  # unscoped: every file's
        assert "Indent with 4 spaces." not in given
        assert "applies to services/api/**" in briefing.markdown
        # an absolute path inside the project is the same file
        again = engine.context(
            p.ContextParams(project=project, paths=[str(root / "services/web/x.py")], budget=2000)
        )
        assert "Indent with 4 spaces." in {e.memory.content for e in again.entries}
        assert "Indent with 2 spaces." not in {e.memory.content for e in again.entries}
        # no file named: the rules bound to some files are not standing
        plain = engine.context(p.ContextParams(project=project, budget=2000))
        assert {e.memory.content for e in plain.entries} == {"Run `make test` before every push."}
        # recall with a path: what is scoped to other files is left out
        hits = engine.query(
            p.QueryParams(query="indent spaces", project=project, paths=["services/web/a.py"])
        ).results
        assert [h.content for h in hits] == ["Indent with 4 spaces."]
        assert hits[0].scope == ["services/web/**"]


def test_unreadable_front_matter_is_a_warning_and_its_rules_apply_everywhere(tmp_path: Path):
    root = tmp_path / "proj"
    _write(
        root,
        {
            ".claude/rules/api.md": '---\npaths: ["src/api/**\n---\n- Validate every request.\n',
            ".github/instructions/x.instructions.md": (
                '---\napplyTo: "../elsewhere/**"\n---\n- Keep handlers thin.\n'
            ),
        },
    )
    project = str(root)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        result = engine.watch(p.WatchParams(project=project, wait=60))
        warned = {(_rel(w.uri, root), w.line) for w in result.warnings}
        assert warned == {
            (".claude/rules/api.md", 1),
            (".github/instructions/x.instructions.md", 1),
        }
        memories = _memories(engine, project)
        assert memories["Validate every request."].scope == []
        assert memories["Keep handlers thin."].scope == []
        assert not any(text.startswith(("paths", "applyTo", "---")) for text in memories)
        # fixed in the editor: the warning goes, the scope comes
        uri = uris.from_fs_path(str(root / ".claude/rules/api.md"))
        fixed = '---\npaths: ["src/api/**"]\n---\n- Validate every request.\n'
        answer = engine.sync_note(p.SyncNoteParams(uri=uri, text=fixed, project=project, open=True))
        assert answer.note and answer.warnings == [] and answer.scope == ["src/api/**"]
        assert _memories(engine, project)["Validate every request."].scope == ["src/api/**"]


def test_new_nested_files_and_imports_are_followed_while_watched(tmp_path: Path):
    """A new AGENTS.md in a new folder below a watched one is read with its folder's scope;
    an import dropped makes the file it imported forgotten."""
    root = tmp_path / "mono"
    _write(root, {**SCOPED, "CLAUDE.md": "@docs/style.md\n", "docs/style.md": "- Early returns.\n"})
    project = str(root)
    with open_engine(tmp_path / "data", front="test", serve=True, vectors=False) as engine:
        assert engine.watch(p.WatchParams(project=project, wait=60)).indexed
        watcher = engine.notes_watcher
        assert watcher is not None and watcher.watching.wait(30)
        assert "Early returns." in _memories(engine, project)
        heard = Heard()
        engine.listeners.append(heard)
        (root / "services" / "jobs").mkdir()  # below services/, watched: it holds notes
        (root / "services" / "jobs" / "AGENTS.md").write_text("- Jobs retry three times.\n")
        assert heard.wait(lambda _: "Jobs retry three times." in _memories(engine, project))
        assert _memories(engine, project)["Jobs retry three times."].scope == ["services/jobs/**"]
        (root / "CLAUDE.md").write_text("- Keep commits small.\n")
        assert heard.wait(lambda _: "Early returns." not in _memories(engine, project))
        assert "Keep commits small." in _memories(engine, project)
