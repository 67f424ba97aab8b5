"""The briefing (memory/context): what an agent should know about a project before it acts,
within a token budget.

Two sections: the standing decisions, conventions and constraints, and the lines of the
instruction files (current: superseded ones and the losing side of a contradiction left out;
stale ones marked), then the memories most relevant to the prompt and paths, which come first
(a standing memory that answers the prompt is given as relevant): what comes from or cites
one of the paths, then the query at the interactive depth by default (at prompt time,
standing false, only the query's hits above a relevance floor). Whole entries are kept in
order of relevance (relevant ones first, then the standing ones, verified before candidate,
constraints, decisions, conventions, instruction lines, newest first) until the budget is
spent; the rest are dropped whole, never cut. Within one session a memory already given is
not given again. Tokens are counted with the packaged embedder's tokenizer
(`models.tokens`).

An agent's own memory (Claude Code's auto memory of the project: `Memory.origin`) that a
statement of the project contradicts and that does not stand is not left out: it comes first,
in a section of its own, beside the statement that stands ("Your auto memory says X; AGENTS.md
says Y"), so the agent learns that what it told itself is contested."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import PurePosixPath
from typing import Protocol
from urllib.parse import unquote, urlparse

from memls import protocol, timeutil
from memls.engine import briefing_text as text
from memls.errors import MemlsError
from memls.notes.scope import covers_any
from memls.scope import VISIBLE_TRUST, project_key
from memls.store.briefings import BriefingSessions

STANDING_TYPES: tuple[protocol.MemoryType, ...] = ("constraint", "decision", "convention")
# the other types stand too when they are units of an instruction file
NOTE_TYPES: tuple[protocol.MemoryType, ...] = ("preference", "fact", "lesson", "note")
Candidate = tuple[str, protocol.Memory, float | None]  # (section, memory, query score)
Others = dict[str, list[protocol.Memory]]  # agent memory id -> the statements that stand
SESSION_DAYS = 7  # what a session was given is kept this long
QUERY_CHARS = 2000  # a long prompt (a pasted log) is searched by its first characters
# The relevance floor of prompt-time memories (a prompt, standing false: Claude Code's
# UserPromptSubmit): a hit is given only if its embedding cosine, or its BM25 score over the
# natural log of the full-text index's rows (BM25's IDF grows so with the store), reaches
# these: figures the query has anyway (its own score is relative to its batch, so some hit
# always tops it). Chosen on the tune half of benchmarks/data/prompt-relevance.json;
# held-out figures in docs/mcp.md (benchmarks/prompt_floor.py, results/prompt-floor.txt and,
# with 1,000 more memories, prompt-floor-1000.txt). Without vectors (settings: vectors =
# false, or degraded) there is no floor: BM25 alone was not measured as one.
FLOOR_COSINE = 0.70
FLOOR_BM25 = 1.40  # x ln(the rows of the full-text index)


class Counter(Protocol):
    name: str

    def count(self, text: str) -> int: ...

    def counts(self, texts: list[str]) -> list[int]: ...


def _plain(m: protocol.Memory) -> protocol.Memory:
    """A memory record as such (a query hit carries its score beside)."""
    fields = protocol.Memory.__struct_fields__
    return protocol.Memory(**{f: getattr(m, f) for f in fields})


def loses(m: protocol.Memory) -> bool:
    """The losing side of an open contradiction: the other statement is the one that holds."""
    return any(ref.current != m.id for ref in (*m.contradicts, *m.contradicted_by))


def contested_own(m: protocol.Memory) -> bool:
    """An agent's own memory on the losing side of an open contradiction."""
    return bool(m.origin) and loses(m)


def stale(m: protocol.Memory) -> bool:
    """A cited text changed or is gone, or feedback said it is outdated or unhelpful."""
    return bool(getattr(m, "stale", False)) or m.feedback_score < 0


def _paths_of(m: protocol.Memory) -> set[str]:
    found = {c.path for c in getattr(m, "citations", None) or []}
    if m.source_uri:
        parsed = urlparse(m.source_uri)
        found.add(unquote(parsed.path) if parsed.scheme == "file" else m.source_uri)
    return found


def answers(hit: protocol.QueryHit, rows: int) -> bool:
    """A hit above the relevance floor (a hit without its figures is kept: not judged);
    `rows`: those of the full-text index, which BM25's scale grows with."""
    e = hit.explain
    if e is None:
        return True
    bm25 = (e.bm25 or 0.0) / math.log(max(rows, 3))
    return (e.vector or 0.0) >= FLOOR_COSINE or bm25 >= FLOOR_BM25


def _touches(m: protocol.Memory, paths: list[str]) -> bool:
    """Whether the memory comes from or cites one of `paths` (compared by their tails)."""
    mine = [PurePosixPath(p) for p in _paths_of(m)]
    for given in paths:
        wanted = PurePosixPath(given)
        for path in mine:
            short, long = sorted((wanted.parts, path.parts), key=len)
            if short and long[-len(short) :] == short:
                return True
    return False


def _relative_paths(project: str, paths: list[str]) -> list[str]:
    """The paths an agent names, relative to the project folder as scopes are (an absolute
    path inside it made relative; `./` dropped)."""
    out = []
    for raw in paths:
        path = PurePosixPath(raw)
        if path.is_absolute():
            try:
                path = path.relative_to(project)
            except ValueError:
                pass
        text = path.as_posix()
        if text and text != "." and text not in out:
            out.append(text)
    return out


class Briefing:
    """memory/context, given what it reads and writes by the constructor."""

    def __init__(
        self,
        *,
        list_memories: Callable[[protocol.ListParams], protocol.ListResult],
        query: Callable[[protocol.QueryParams], protocol.QueryResult],
        indexed_rows: Callable[[], int],
        sessions: Callable[[str], AbstractContextManager[BriefingSessions]],
        given: Callable[[str], AbstractContextManager[BriefingSessions]],
        counter: Counter,
        clock: Callable[[], str],
        instruction_units: Callable[[str], list[protocol.Memory]] = lambda project: [],
        get: Callable[[protocol.GetParams], protocol.Memory] | None = None,
    ) -> None:
        self._list = list_memories
        self._query = query
        self._rows = indexed_rows
        self._sessions = sessions  # a write: what a session was given
        self._given = given  # a read of the same
        self._counter = counter
        self._clock = clock
        self._instruction_units = instruction_units
        self._get = get

    def context(self, params: protocol.ContextParams) -> protocol.ContextResult:
        project = project_key(params.project)
        now = self._clock()
        given: set[str] = set()
        if params.session is not None and not params.reset:
            with self._given(project) as sessions:
                given = sessions.given(params.session)
        paths = _relative_paths(project, params.paths)
        standing = self._standing(project, now, paths) if params.standing else []
        # what answers the prompt comes first, standing or not: a tight budget keeps it
        relevant, degraded = self._relevant(project, params, paths)
        # before both: an agent's own memory that the project contradicts, with what stands
        known = {m.id: m for m in [*standing, *(m for m, _ in relevant)]}
        own = [m for m in known.values() if contested_own(m)]
        others = self._standing_against(project, own, known)
        own = [m for m in own if others.get(m.id)]
        relevant = [(m, s) for m, s in relevant if not loses(m)]
        answered = {m.id for m, _ in relevant}
        standing = [m for m in standing if m.id not in answered and not loses(m)]
        candidates: list[Candidate] = [("contradicted", m, None) for m in own]
        candidates += [("relevant", m, s) for m, s in relevant]
        candidates += [("standing", m, None) for m in standing]
        fresh = [c for c in candidates if c[1].id not in given]
        chosen, dropped, markdown, tokens = self._fit(project, now, fresh, params.budget, others)
        if params.session is not None and (chosen or params.reset):
            cutoff = dt.datetime.fromisoformat(now) - dt.timedelta(days=SESSION_DAYS)
            with self._sessions(project) as sessions:  # one write (one commit) a call
                if params.reset:
                    sessions.reset(params.session)
                sessions.add(params.session, [e.memory.id for e in chosen], now)
                sessions.prune(timeutil.format_ts(cutoff))
        return protocol.ContextResult(
            project=project,
            markdown=markdown,
            tokens=tokens,
            budget=params.budget,
            tokenizer=self._counter.name,
            entries=chosen,
            dropped=dropped,
            repeated=len(candidates) - len(fresh),
            session=params.session,
            degraded=degraded,
        )

    # ------------------------------------------------------------ what could be given

    def _standing(self, project: str, now: str, paths: list[str]) -> list[protocol.Memory]:
        """The standing memories: constraints, decisions, conventions, and every unit of an
        instruction file (each of its lines is a standing instruction, whatever its type);
        a rule scoped to some files only when one of `paths` is among them, as the agents
        load it (none without paths)."""
        listed: list[protocol.Memory] = []
        for kind in STANDING_TYPES:
            listed += self._list(
                protocol.ListParams(project=project, status="active", type=kind, limit=1000)
            ).memories
        listed += [m for m in self._instruction_units(project) if m.type not in STANDING_TYPES]
        found = [
            m
            for m in listed
            if m.trust in VISIBLE_TRUST
            and (m.valid_until is None or m.valid_until > now)
            and m.valid_from <= now
            and not m.superseded_by
            and (not loses(m) or m.origin)  # an agent's own, contested: `context` says so
            and (not m.scope or (paths and covers_any(m.scope, paths)))
        ]
        order = {kind: n for n, kind in enumerate((*STANDING_TYPES, *NOTE_TYPES))}
        found.sort(key=lambda m: m.recorded_at, reverse=True)
        found.sort(key=lambda m: (m.trust != "verified", order[m.type]))
        return found

    def _relevant(
        self, project: str, params: protocol.ContextParams, paths: list[str]
    ) -> tuple[list[tuple[protocol.Memory, float | None]], list[str]]:
        """What comes from or cites one of the paths (newest first), then the query's hits
        for the prompt and paths, by score; with paths, nothing scoped to other files."""
        found: list[tuple[protocol.Memory, float | None]] = []
        if params.paths:
            listed = self._list(protocol.ListParams(project=project, status="active", limit=1000))
            touching = [
                m
                for m in listed.memories
                if m.trust in VISIBLE_TRUST
                and (not loses(m) or m.origin)
                and _touches(m, params.paths)
                and covers_any(m.scope, paths)
            ]
            found += [(m, None) for m in touching[: params.k]]
        words = " ".join([params.prompt or "", *params.paths]).strip()[:QUERY_CHARS]
        if not words:
            return found, []
        floor = bool(params.prompt) and not params.standing
        result = self._query(
            protocol.QueryParams(
                query=words,
                project=project,
                k=params.k,
                depth=params.depth,
                explain=floor,
                paths=paths[:64],
            )
        )
        taken = {m.id for m, _ in found}
        floor = floor and any(h.explain and h.explain.vector is not None for h in result.results)
        rows = self._rows() if floor else 0
        found += [
            (_plain(h), h.score)
            for h in result.results
            if h.id not in taken and (not loses(h) or h.origin) and (not floor or answers(h, rows))
        ]
        return found, list(result.degraded)

    def _standing_against(
        self, project: str, own: list[protocol.Memory], known: dict[str, protocol.Memory]
    ) -> Others:
        """For each contested memory of an agent's own, the statements that stand against
        it (read when the briefing has not read them already; one forgotten meanwhile is
        left out)."""
        out: Others = {}
        for m in own:
            for ref in (*m.contradicts, *m.contradicted_by):
                if ref.current == m.id:
                    continue
                other = known.get(ref.current)
                if other is None and self._get is not None:
                    try:
                        other = self._get(protocol.GetParams(id=ref.current, project=project))
                    except MemlsError:
                        continue
                    known[other.id] = other
                if other is not None and other.id not in {o.id for o in out.get(m.id, [])}:
                    out.setdefault(m.id, []).append(other)
        return out

    # ------------------------------------------------------------ within the budget

    def _fit(
        self,
        project: str,
        now: str,
        candidates: list[Candidate],
        budget: int,
        others: Others | None = None,
    ) -> tuple[list[protocol.ContextEntry], int, str, int]:
        """The longest prefix of `candidates` (most relevant first) whose document fits."""
        if not candidates:
            return [], 0, "", 0
        lines = [
            text.contradicted(m, (others or {}).get(m.id, []), project, now)
            if section == "contradicted"
            else text.entry(m, project, now, stale=stale(m))
            for section, m, _ in candidates
        ]
        costs = self._costs(lines, budget)
        fixed = self._counter.count(text.head(project))
        titles = {name: self._counter.count(title) for name, title in text.TITLES.items()}
        footer = self._counter.count(text.footer(len(candidates)))
        total, opened, keep = fixed, set(), 0
        everything = fixed + sum(costs) + sum(titles[s] for s in {c[0] for c in candidates})
        reserve = 0 if everything <= budget and len(costs) == len(lines) else footer
        for (section, _, _), cost in zip(candidates, costs, strict=False):
            need = cost + (0 if section in opened else titles[section])
            if total + need + reserve > budget:
                break
            total += need
            opened.add(section)
            keep += 1
        while True:  # the count of the whole document has the last word
            markdown, tokens = self._render(project, candidates, lines, keep)
            if tokens <= budget or keep == 0:
                break
            keep -= 1
        if keep == 0:
            return [], len(candidates), "", 0
        chosen = [
            protocol.ContextEntry(
                section=section,  # type: ignore[arg-type]
                memory=m,
                tokens=cost,
                stale=stale(m),
                score=score,
            )
            for (section, m, score), cost in zip(candidates[:keep], costs[:keep], strict=True)
        ]
        return chosen, len(candidates) - keep, markdown, tokens

    def _costs(self, lines: list[str], budget: int) -> list[int]:
        """The tokens of the first lines, counted in batches until they pass the budget (the
        rest cannot be given: no need to count them)."""
        costs: list[int] = []
        batch = 16
        while len(costs) < len(lines) and sum(costs) <= budget:
            costs += self._counter.counts(lines[len(costs) : len(costs) + batch])
            batch *= 2
        return costs

    def _render(
        self,
        project: str,
        candidates: list[Candidate],
        lines: list[str],
        keep: int,
    ) -> tuple[str, int]:
        sections: dict[str, list[str]] = {"contradicted": [], "standing": [], "relevant": []}
        for (section, _, _), line in zip(candidates[:keep], lines[:keep], strict=True):
            sections[section].append(line)
        markdown = text.document(project, sections, len(candidates) - keep)
        return markdown, self._counter.count(markdown)
