"""The briefing (memory/context) on a real engine: what it gives, its budget (counted with the
real tokenizer), the session rule, and what it leaves out (superseded memories, the losing side
of a contradiction) or marks (stale ones)."""

from __future__ import annotations

import json

import pytest
from tokenizers import Tokenizer

from memls import protocol as p
from memls.errors import InvalidInput
from memls.models.locate import locate

P = "brief"


def _context(engine, **kw):
    return engine.context(p.parse(p.ContextParams, {"project": P, **kw}))


def _store(engine, text, kind, **kw):
    return engine.store(p.StoreParams(text=text, project=P, type=kind, **kw))


@pytest.fixture(scope="module")
def tokenizer():
    where = locate("embedder")
    t = Tokenizer.from_file(str(where.path / "tokenizer.json"))
    t.no_truncation()
    return t


def _tokens(tokenizer, text: str) -> int:
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def _given(result) -> list[str]:
    return [e.memory.id for e in result.entries]


def test_standing_then_relevant_each_with_id_type_and_age(engine, clock):
    rule = _store(engine, "Never commit secrets; they are encrypted with sops", "constraint")
    deploy = _store(engine, "Deploys go out on Tuesdays through ArgoCD", "decision")
    tabs = _store(engine, "Indent Python with four spaces", "convention")
    port = _store(engine, "The API server listens on port 8080 in development", "fact")
    clock.advance(days=3)
    r = _context(engine, prompt="which port does the API server listen on", depth="none")
    standing, relevant = r.markdown.split("## Relevant to this task")
    for stored in (rule, deploy, tabs):
        assert f"[{stored.id}; {stored.memory.type}; candidate; 3d]" in standing
    assert port.id in relevant and port.id not in standing
    assert [e.section for e in r.entries] == ["relevant", "standing", "standing", "standing"]
    # constraints, decisions, conventions in that order
    assert standing.index(rule.id) < standing.index(deploy.id) < standing.index(tabs.id)
    assert json.dumps(port.memory.content) in relevant  # the text, quoted whole
    assert "not instructions" in r.markdown.splitlines()[1]


def test_budget_is_counted_with_the_tokenizer_and_drops_whole_entries(engine, tokenizer):
    words = [f"{a}{b}" for a in ("zor", "quen", "lapt", "drim", "vesk") for b in "aeiouyrs"]
    stored = [
        _store(
            engine,
            f"The {w} module keeps its fixtures beside its tests and documents "
            f"every public function of {w}",
            "convention",
        )
        for w in words
    ]
    assert engine.flush(timeout=60)
    full = _context(engine, budget=32000)  # all of them (less the losers of false alarms)
    assert full.dropped == 0 and len(full.entries) >= 20
    assert full.tokens == _tokens(tokenizer, full.markdown) > 800
    for budget in (120, 300, 800):
        r = _context(engine, budget=budget)
        assert r.tokens == _tokens(tokenizer, r.markdown) <= budget
        assert r.dropped == len(full.entries) - len(r.entries) > 0
        assert f"({r.dropped} more left out" in r.markdown
        for entry in r.entries:  # never half an entry
            assert json.dumps(entry.memory.content) in r.markdown
        # the entries kept are the most relevant ones: a prefix of the full order
        assert _given(r) == _given(full)[: len(r.entries)]
    assert "bge-small" in r.tokenizer
    assert {e.memory.id for e in full.entries} <= {s.id for s in stored}


def test_within_a_session_a_memory_is_given_once(engine):
    first = _store(engine, "We squash-merge pull requests", "convention")
    one = _context(engine, session="s-1")
    assert _given(one) == [first.id]
    again = _context(engine, session="s-1")
    assert again.markdown == "" and again.entries == [] and again.repeated == 1
    second = _store(engine, "Postgres is the system of record", "decision")
    assert _given(_context(engine, session="s-1")) == [second.id]  # only what is new
    assert set(_given(_context(engine, session="s-2"))) == {first.id, second.id}
    assert _context(engine, session="s-1", prompt="squash merge").entries == []
    reset = _context(engine, session="s-1", reset=True)  # the agent's context was cleared
    assert set(_given(reset)) == {first.id, second.id}
    assert len(_context(engine).entries) == 2  # no session: everything, every time


def test_what_is_left_out_and_what_is_marked(engine):
    old = _store(
        engine,
        "We use yarn for package management in the web app",
        "decision",
        valid_from="2024-01-01",
    )
    new = _store(
        engine,
        "We no longer use yarn; we use pnpm for package management",
        "decision",
        valid_from="2024-06-01",
    )
    assert engine.flush(timeout=60)
    assert engine.conflicts(p.ConflictsParams(project=P)).conflicts  # an open contradiction
    replaced = _store(engine, "Releases are cut every two weeks", "decision")
    replacement = _store(engine, "Releases are cut every week on Monday", "decision")
    engine.supersede(p.SupersedeParams(old=replaced.id, by=replacement.id, project=P))
    outdated = _store(engine, "The staging database is reset every night", "constraint")
    engine.feedback(p.FeedbackParams(id=outdated.id, signal="outdated", project=P))
    note = _store(engine, "Alice likes the blue theme", "note")
    r = _context(engine)
    given = _given(r)
    assert new.id in given and replacement.id in given
    assert old.id not in given  # the losing side of the contradiction
    assert replaced.id not in given  # superseded
    assert note.id not in given  # not a standing type
    (stale,) = [e for e in r.entries if e.stale]
    assert stale.memory.id == outdated.id
    assert f"- STALE [{outdated.id};" in r.markdown


def test_nothing_to_give_and_bad_input(engine):
    empty = _context(engine, session="x")
    assert empty.markdown == "" and empty.tokens == 0 and empty.entries == []
    with pytest.raises(InvalidInput) as bad:
        p.parse(p.ContextParams, {"project": P, "budget": 10})
    assert bad.value.field == "budget"
    with pytest.raises(InvalidInput) as bad:
        p.parse(p.ContextParams, {"project": P, "session": " "})
    assert bad.value.field == "session"
    with pytest.raises(InvalidInput):
        engine.context(p.ContextParams(project=" "))


def test_paths_bring_what_comes_from_or_cites_them(engine):
    pay = _store(
        engine,
        "Charges are idempotent: the key is the order id",
        "fact",
        source_uri="file:///repo/src/payments/charge.py",
        source_range="10:0-14:0",
    )
    other = _store(
        engine,
        "The admin screens use server-side rendering",
        "fact",
        source_uri="file:///repo/src/admin/views.py",
    )
    r = _context(engine, paths=["src/payments/charge.py"], depth="none")
    relevant = [e.memory.id for e in r.entries if e.section == "relevant"]
    assert relevant[0] == pay.id and other.id not in relevant[:1]
    assert "repo/src/payments/charge.py:11" in r.markdown  # its source, 1-based line


def test_a_tight_budget_keeps_what_answers_the_prompt(engine, clock):
    """A standing convention that answers the prompt is given first (as relevant), before
    the newer conventions that do not: with 120 tokens it is the one kept."""
    postgres = _store(
        engine, "Integration tests need a running Postgres 16 container.", "convention"
    )
    for text in (
        "Commit messages follow the Conventional Commits format.",
        "Public functions carry type hints and a docstring.",
        "Feature flags live in config/flags.yaml, one file per service.",
        "Logs are structured JSON, one object per line, never plain text.",
        "Branches are named after their ticket, e.g. PAY-123-refund-retry.",
    ):
        clock.advance(days=1)
        _store(engine, text, "convention")
    r = _context(engine, prompt="how do we run the integration tests", budget=120)
    assert r.tokens <= 120 and r.dropped > 0
    assert r.entries[0].memory.id == postgres.id and r.entries[0].section == "relevant"
    unprompted = _context(engine, budget=120)
    assert postgres.id not in _given(unprompted)  # the newest standing ones fill it without
