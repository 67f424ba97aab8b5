"""What reading every agent's files costs the owner: a monorepo of 1,000 packages, and a
project with 30 agent files and 200 Claude Code auto memories.

    python benchmarks/agent_files.py [--packages 1000] [--every 10] [--rounds 5]

Makes a monorepo in a temporary folder: PACKAGES package folders (`packages/pkg-NNNN/` with
`src/` (5 files), `tests/` (2 files), `dist/` (2 files, ignored by the root `.gitignore`) and a
`package.json`), an AGENTS.md in every EVERY-th package (a CLAUDE.md in every 2*EVERY-th), the
agents' root files, a `node_modules/` of 3 x PACKAGES folders (ignored too) and a git
repository of it all (`.git`, every file not ignored committed). Then, each timed ROUNDS
times (median, min):

1. the note walk alone (`memls.notes.files.find` with the table of conventions: one
   `os.scandir` a folder, pruned by `.gitignore`, `.git`, `node_modules`), against the other
   way to list a git project's files: `git ls-files --cached --others --exclude-standard`
   with the table asked about each path;
2. the owner's first reading (`memory/watch` with wait, vectors off: the notes in the record),
   the folders it watches and the inotify watches the process holds then (counted in
   /proc/self/fdinfo), and the RSS before and after;
3. the owner's reading of a project with 30 agent files and 200 Claude Code auto memories
   (topic files with front matter, each one real list item of the agent files under
   ../shared/data/notes, and their `MEMORY.md` index, in the folder Claude Code uses,
   under a throwaway home) with vectors on (embedded and checked for contradictions:
   `memory/watch` answers once that is done);
4. an edit of one note on disk, until its new line is in the record (the watcher's debounce,
   the read and the sync), and through the editor's language server: a buffer edit that
   breaks a rule's front matter, until the warning diagnostic is published (`memls serve
   --stdio` driven by pytest-lsp's client).

Prints the load average: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memls import protocol as p
from memls.daemon import open_engine
from memls.notes import DEFAULT
from memls.notes.agent_places import claude_memory
from memls.notes.files import find
from memls.notes.ignore import Ignores

NOTES = Path(
    os.environ.get("MEMLS_NOTES")
    or Path(__file__).resolve().parents[1].parent / "shared" / "data" / "notes"
)  # MEMLS_NOTES: the notes folder when the checkout is not beside shared/

ROOT_FILES = {
    "AGENTS.md": "- Run `make test` before every push.\n",
    "CLAUDE.md": "@AGENTS.md\n",
    "GEMINI.md": "- Explain each shell command before running it.\n",
    ".github/copilot-instructions.md": "- Write docstrings for public functions.\n",
    ".cursor/rules/react.mdc": "---\nglobs: **/*.tsx\n---\n- Name hooks useSomething.\n",
    ".claude/rules/tests.md": '---\npaths: ["**/tests/**"]\n---\n- Use fixtures.\n',
    "docs/adr/0001-monorepo.md": "# 1. Monorepo\n\n## Decision\n\nOne repository.\n",
    ".gitignore": "dist/\nnode_modules/\n",
}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def inotify_watches() -> int:
    """The inotify watches this process holds (every inotify descriptor's `inotify wd:`)."""
    count = 0
    for fd in os.listdir("/proc/self/fdinfo"):
        try:
            text = Path(f"/proc/self/fdinfo/{fd}").read_text()
        except OSError:
            continue
        count += sum(1 for line in text.splitlines() if line.startswith("inotify wd:"))
    return count


def make_monorepo(root: Path, packages: int, every: int) -> int:
    """Returns how many agent files it holds."""
    files = 0
    for name, text in ROOT_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
        files += name != ".gitignore"
    for n in range(packages):
        pkg = root / "packages" / f"pkg-{n:04d}"
        for sub, count in (("src", 5), ("tests", 2), ("dist", 2)):
            (pkg / sub).mkdir(parents=True)
            for i in range(count):
                (pkg / sub / f"f{i}.ts").write_text(f"export const x{i} = {n};\n")
        (pkg / "package.json").write_text(f'{{"name": "pkg-{n}"}}\n')
        if n % every == 0:
            (pkg / "AGENTS.md").write_text(f"- Package {n} builds with `make pkg-{n}`.\n")
            files += 1
        if n % (2 * every) == 0:
            (pkg / "CLAUDE.md").write_text(f"- Package {n} is owned by team {n % 7}.\n")
            files += 1
        (pkg / "dist" / "AGENTS.md").write_text("- A built copy: never read.\n")
    for n in range(3 * packages):
        dep = root / "node_modules" / f"dep-{n}"
        dep.mkdir(parents=True)
        (dep / "index.js").write_text("module.exports = 1;\n")
        if n % 50 == 0:
            (dep / "AGENTS.md").write_text("- A dependency's rule: never read.\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "x"],
        cwd=root,
        check=True,
    )
    return files


def timed(run, rounds: int) -> tuple[float, float, object]:
    times, out = [], None
    for _ in range(rounds):
        started = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - started)
    return statistics.median(times), min(times), out


def by_git(root: Path) -> int:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=root,
        check=True,
        capture_output=True,
    ).stdout.decode()
    return sum(1 for path in listed.split("\0") if path and DEFAULT.match(path) is not None)


def real_facts(count: int) -> list[str]:
    """COUNT distinct list items of the real agent files and decision records under
    ../shared/data/notes (the items of 40 to 200 characters, in path order)."""
    items: list[str] = []
    for path in sorted(NOTES.rglob("*.md")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            found = re.match(r"\s*[-*] (.{40,200})$", line)
            if found and found.group(1) not in items:
                items.append(found.group(1))
    if len(items) < count:
        raise SystemExit(f"{NOTES} holds {len(items)} list items, not {count}")
    return items[:count]


def auto_memories(project: Path, home: Path, count: int = 200) -> Path:
    """COUNT topic files of Claude Code's auto memory of PROJECT, as the real binary writes
    them (front matter: name, description, metadata.type), each holding one real fact, and
    their MEMORY.md index."""
    folder = claude_memory(project, home, {}).folder
    folder.mkdir(parents=True)
    kinds = ("project", "feedback", "user", "reference")
    index = []
    for n, fact in enumerate(real_facts(count)):
        name = f"fact-{n:03d}.md"
        (folder / name).write_text(
            f"---\nname: fact {n}\ndescription: {fact[:60]}\n"
            f"metadata:\n  type: {kinds[n % 4]}\n---\n\n{fact}\n"
        )
        index.append(f"- [fact {n}]({name}) — {fact[:60]}")
    (folder / "MEMORY.md").write_text("\n".join(index) + "\n")
    return folder


def thirty(root: Path) -> None:
    for name, text in ROOT_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for n in range(23):
        (root / "services" / f"svc{n}").mkdir(parents=True)
        (root / "services" / f"svc{n}" / "AGENTS.md").write_text(
            f"- Service {n} logs to stdout.\n- Service {n} listens on port {8000 + n}.\n"
        )


async def lsp_edit_to_warning(root: Path, data: Path) -> float:
    """Seconds from a buffer edit that breaks a rule's front matter to the warning published."""
    from lsprotocol import types
    from pygls import uris
    from pytest_lsp import ClientServerConfig, client_capabilities

    env = {**os.environ, "MEMLS_DATA_DIR": str(data)}
    client = await ClientServerConfig(
        server_command=[sys.executable, "-m", "memls", "serve", "--stdio"], server_env=env
    ).start()
    rule = root / ".claude" / "rules" / "tests.md"
    uri = uris.from_fs_path(str(rule))
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("neovim"),
                workspace_folders=[
                    types.WorkspaceFolder(uri=uris.from_fs_path(str(root)), name="r")
                ],
            )
        )
        await client.protocol.send_request_async("memory/watch", {"project": str(root), "wait": 60})
        text = rule.read_text()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=1, text=text
                )
            )
        )
        await asyncio.sleep(1.0)  # the open buffer synced
        broken = text.replace('paths: ["**/tests/**"]', 'paths: ["**/tests/**')
        started = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=broken)],
            )
        )
        # the client keeps the last diagnostics of each file: checked before each wait, so a
        # publish that came before the wait is not missed
        while not any(d.code == "note-unread" for d in client.diagnostics.get(uri, [])):
            await client.wait_for_notification("textDocument/publishDiagnostics")
        return time.perf_counter() - started
    finally:
        await client.shutdown_session()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", type=int, default=1000)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    logging.getLogger("pygls").setLevel(logging.ERROR)  # the client's unknown notifications
    print("$ python benchmarks/agent_files.py " + shlex.join(sys.argv[1:]))
    print(f"load average at the start {os.getloadavg()}; {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "mono"
        root.mkdir()
        made = time.perf_counter()
        files = make_monorepo(root, args.packages, args.every)
        folders = sum(1 for _ in os.walk(root))
        print(
            f"monorepo: {args.packages} packages, {files} agent files, {folders} folders in all "
            f"({time.perf_counter() - made:.1f} s to make)"
        )

        med, low, found = timed(lambda: find(root, DEFAULT, Ignores(root)), args.rounds)
        print(
            f"1. the note walk: median {med * 1000:.0f} ms, min {low * 1000:.0f} ms; "
            f"{len(found.notes)} notes, {found.walked} folders read "  # type: ignore[attr-defined]
            f"(node_modules, .git and ignored dist/ not entered)"
        )
        med, low, listed = timed(lambda: by_git(root), args.rounds)
        print(
            f"   git ls-files --cached --others --exclude-standard + the table: median "
            f"{med * 1000:.0f} ms, min {low * 1000:.0f} ms; {listed} notes"
        )

        data = Path(tmp) / "data"
        before = rss_mb()
        with open_engine(data, front="bench", serve=True, vectors=False) as engine:
            watches_idle = inotify_watches()
            started = time.perf_counter()
            result = engine.watch(p.WatchParams(project=str(root), wait=60))
            first = time.perf_counter() - started
            assert result.indexed
            watcher = engine.notes_watcher
            assert watcher is not None and watcher.watching.wait(60)
            watched = len(watcher._projects[str(root)].folders)
            watches = inotify_watches() - watches_idle
            after = rss_mb()
            print(
                f"2. first reading by the owner (vectors off): {first:.2f} s, {len(result.notes)} "
                f"notes; {watched} folders watched, {watches} inotify watches held "
                f"(of {folders} folders); RSS {before:.0f} MB before the engine, "
                f"{after:.0f} MB after"
            )
            note = root / "packages" / "pkg-0000" / "AGENTS.md"
            times = []
            for n in range(args.rounds):
                line = f"Package 0 edit {n} is read."
                note.write_text(f"- Package 0 builds with `make pkg-0`.\n- {line}\n")
                started = time.perf_counter()
                while not any(
                    m.content == line
                    for m in engine.list(p.ListParams(project=str(root), limit=1000)).memories
                ):
                    time.sleep(0.01)
                times.append(time.perf_counter() - started)
            print(
                f"4. an edit of one note on disk until its line is in the record: median "
                f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
            )

        small = Path(tmp) / "thirty"
        small.mkdir()
        thirty(small)
        home = Path(tmp) / "home"
        auto_memories(small, home)
        os.environ["HOME"] = str(home)  # the owner finds Claude Code's folder under it
        with open_engine(Path(tmp) / "data30", front="bench", serve=True) as engine:
            started = time.perf_counter()
            result = engine.watch(p.WatchParams(project=str(small), wait=60))
            took = time.perf_counter() - started
            print(
                f"3. a project with {len(result.notes)} note files (30 agent files, 200 auto "
                f"memories and their index), vectors on (read, embedded, "
                f"checked for contradictions): {took:.2f} s, indexed {result.indexed}"
            )
        seconds = asyncio.run(lsp_edit_to_warning(small, Path(tmp) / "data-lsp"))
        print(
            f"   editor: a buffer edit breaking a rule's front matter until its warning is "
            f"published: {seconds * 1000:.0f} ms (the language server's 250 ms debounce included)"
        )
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
