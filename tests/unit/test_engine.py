"""The engine against a real SQLite store: every operation, its errors, its logs."""

from __future__ import annotations

import sqlite3

import pytest

from memls import protocol as p
from memls.errors import InvalidInput, NotFound, Refused


def store(engine, text, project="alpha", **kw):
    return engine.store(p.parse(p.StoreParams, {"text": text, "project": project, **kw}))


def query(engine, text, project="alpha", **kw):
    return engine.query(p.parse(p.QueryParams, {"query": text, "project": project, **kw}))


def ids(result):
    return [h.id for h in result.results]


def count_rows(engine, table):
    return engine.db.read(f"SELECT count(*) FROM {table}")[0][0]


# ------------------------------------------------------------------ store


def test_store_returns_the_memory_with_its_columns(engine):
    r = store(engine, "We use pnpm for packages", type="decision", sourceUri="file:///a.md")
    assert r.created and not r.duplicate
    m = r.memory
    assert (m.project, m.type, m.status, m.trust) == ("alpha", "decision", "active", "candidate")
    assert m.valid_from == m.recorded_at and m.valid_until is None
    assert m.source_uri == "file:///a.md" and len(m.canonical_hash) == 64


def test_duplicate_content_in_the_same_project_returns_the_existing_id(engine):
    first = store(engine, "We use **pnpm** for packages")
    again = store(engine, "  we use pnpm\tfor   PACKAGES ")
    assert again.duplicate and not again.created and again.id == first.id
    other = store(engine, "We use pnpm for packages", project="beta")
    assert other.created and other.id != first.id
    assert count_rows(engine, "memories") == 2


def test_forgotten_content_is_refused_naming_reason_and_date_unless_forced(engine):
    r = store(engine, "Deploy on Fridays")
    engine.forget(p.ForgetParams(id=r.id, reason="user_deleted", project="alpha"))
    with pytest.raises(Refused) as err:
        store(engine, "deploy on fridays")
    assert "user_deleted" in str(err.value) and "forgotten on 2025-" in str(err.value)
    assert count_rows(engine, "memories") == 0
    forced = store(engine, "deploy on fridays", force=True)
    assert forced.created and forced.tombstone_cleared
    ops = [e.op for e in engine.audit(p.AuditParams(project="alpha")).entries]
    assert "tombstone_cleared" in ops
    assert count_rows(engine, "tombstones") == 0


def test_store_validates_before_writing(engine):
    with pytest.raises(InvalidInput) as err:
        store(engine, "   ")
    assert err.value.field == "text"
    with pytest.raises(InvalidInput) as err:
        store(engine, "x", validFrom="yesterday")
    assert err.value.field == "validFrom"
    with pytest.raises(InvalidInput) as err:
        store(engine, "x", validFrom="2025-02-01", validUntil="2025-01-01")
    assert err.value.field == "validUntil"
    with pytest.raises(InvalidInput) as err:
        p.parse(p.StoreParams, {"text": "x", "project": "a", "type": "opinion"})
    assert err.value.field == "type" and "decision" in str(err.value)
    with pytest.raises(NotFound):
        store(engine, "x", derivedFrom="m_nope")
    assert count_rows(engine, "memories") == 0 and count_rows(engine, "audit") == 0


@pytest.mark.parametrize("project", [None, "", "   ", "\t\n", "\u3000"])
def test_every_operation_refuses_a_missing_or_blank_project(engine, project):
    store(engine, "a fact")
    calls = [
        lambda: engine.store(p.StoreParams(text="x", project=project)),
        lambda: engine.get(p.GetParams(id="m_x", project=project)),
        lambda: engine.list(p.ListParams(project=project)),
        lambda: engine.query(p.QueryParams(query="fact", project=project)),
        lambda: engine.supersede(p.SupersedeParams(old="a", by="b", project=project)),
        lambda: engine.feedback(p.FeedbackParams(id="a", signal="helpful", project=project)),
        lambda: engine.review(p.ReviewParams(action="list", project=project)),
        lambda: engine.forget(p.ForgetParams(id="a", reason="dedup", project=project)),
        lambda: engine.forgotten(p.ForgottenParams(project=project)),
        lambda: engine.stats(p.StatsParams(project=project)),
        lambda: engine.audit(p.AuditParams(project=project)),
        lambda: engine.maintain(p.MaintainParams(project=project)),
        lambda: list(engine.export(project)),
    ]
    for call in calls:
        with pytest.raises(InvalidInput) as err:
            call()
        assert err.value.field == "project"


def test_the_database_refuses_an_empty_project_too(engine):
    for bad in ("", " ", " padded", "x\t"):
        with pytest.raises(sqlite3.IntegrityError):
            with engine.db.transaction() as conn:
                conn.execute(
                    "INSERT INTO memories (id, project, content, type, valid_from, recorded_at, "
                    "content_hash, canonical_hash) VALUES ('m1', ?, 'c', 'note', 't', 't', 'h', 'h')",
                    (bad,),
                )


def test_database_check_constraints_hold_epistemic_state(engine):
    r = store(engine, "a fact")
    for column, value in (("status", "deleted"), ("trust", "maybe"), ("type", "opinion")):
        with pytest.raises(sqlite3.IntegrityError):
            with engine.db.transaction() as conn:
                conn.execute(f"UPDATE memories SET {column} = ? WHERE id = ?", (value, r.id))
    assert engine.get(p.GetParams(id=r.id, project="alpha")).trust == "candidate"


# ------------------------------------------------------------------ reads


def test_get_of_another_projects_id_is_not_found(engine):
    r = store(engine, "alpha's secret", project="alpha")
    assert engine.get(p.GetParams(id=r.id, project="alpha")).content == "alpha's secret"
    with pytest.raises(NotFound):
        engine.get(p.GetParams(id=r.id, project="beta"))


def test_query_finds_by_words_and_stays_in_scope(engine):
    a = store(engine, "We deploy the API with Kubernetes", project="alpha")
    store(engine, "We deploy the API with Nomad", project="beta")
    store(engine, "Lunch is at noon", project="alpha")
    r = query(engine, "how do we deploy the api")
    assert ids(r) == [a.id] and r.project == "alpha"
    assert r.results[0].score > 0


def test_query_hides_flagged_and_rejected_but_list_shows_them(engine):
    a = store(engine, "Use tabs for indentation")
    for _ in range(2):
        engine.feedback(p.FeedbackParams(id=a.id, signal="outdated", project="alpha"))
    assert query(engine, "indentation").results == []
    listed = engine.list(p.ListParams(project="alpha")).memories
    assert [m.trust for m in listed] == ["flagged"]


def test_user_scope_only_with_explicit_opt_in(engine):
    u = store(engine, "I prefer short commit messages", project="@user")
    mine = store(engine, "Commit messages follow conventional commits")
    assert ids(query(engine, "commit messages")) == [mine.id]
    both = ids(query(engine, "commit messages", includeUser=True))
    assert set(both) == {u.id, mine.id}
    assert len(engine.list(p.ListParams(project="alpha")).memories) == 1
    assert len(engine.list(p.ListParams(project="alpha", include_user=True)).memories) == 2


def test_query_type_filter_and_k(engine):
    d = store(engine, "Database is Postgres", type="decision")
    store(engine, "Database tests use a fresh Postgres schema", type="convention")
    assert ids(query(engine, "postgres database", types=["decision"])) == [d.id]
    assert len(query(engine, "postgres database", k=1).results) == 1
    with pytest.raises(InvalidInput) as err:
        p.parse(p.QueryParams, {"query": "x", "project": "a", "k": 0})
    assert err.value.field == "k"


def test_query_of_punctuation_only_returns_nothing(engine):
    store(engine, "something")
    assert query(engine, "?!").results == []  # lexical: no words, no candidates
    with pytest.raises(InvalidInput):
        query(engine, "  ")


# ------------------------------------------------------------------ time


def test_supersede_ends_validity_and_links_both_ways(engine, clock):
    clock.set("2025-06-01T00:00:00Z")
    old = store(engine, "We use yarn", validFrom="2025-01-01")
    new = store(engine, "We moved to pnpm", validFrom="2025-03-01")
    r = engine.supersede(p.SupersedeParams(old=old.id, by=new.id, project="alpha"))
    assert r.old.status == "superseded" and r.old.valid_until == "2025-03-01T00:00:00.000000Z"
    assert r.old.invalidated_at is not None
    assert r.old.superseded_by == [new.id] and r.new.supersedes == [old.id]
    got = engine.get(p.GetParams(id=new.id, project="alpha"))
    assert got.supersedes == [old.id]
    # default query: only what is valid now
    assert ids(query(engine, "yarn pnpm")) == [new.id]
    # point in time: the superseded memory is still found when it was valid
    assert ids(query(engine, "yarn pnpm", validAt="2025-02-01")) == [old.id]
    assert ids(query(engine, "yarn pnpm", validAt="2025-03-01")) == [new.id]
    assert ids(query(engine, "yarn pnpm", validAt="2024-12-31")) == []


def test_supersede_refusals_change_nothing(engine):
    a = store(engine, "A one", validFrom="2025-02-01")
    b = store(engine, "B two", validFrom="2025-01-01")
    c = store(engine, "C three", project="beta")
    with pytest.raises(Refused):  # new became valid before old
        engine.supersede(p.SupersedeParams(old=a.id, by=b.id, project="alpha"))
    with pytest.raises(InvalidInput):
        engine.supersede(p.SupersedeParams(old=a.id, by=a.id, project="alpha"))
    with pytest.raises(NotFound):
        engine.supersede(p.SupersedeParams(old=a.id, by=c.id, project="alpha"))
    engine.supersede(p.SupersedeParams(old=b.id, by=a.id, project="alpha"))
    with pytest.raises(Refused):
        engine.supersede(p.SupersedeParams(old=b.id, by=a.id, project="alpha"))
    assert count_rows(engine, "edges") == 1


def test_as_of_reads_transaction_time(engine, clock):
    clock.set("2025-01-01T00:00:00Z")
    old = store(engine, "Release train is weekly")
    clock.set("2025-02-01T00:00:00Z")
    new = store(engine, "Release train is biweekly")
    clock.set("2025-03-01T00:00:00Z")
    engine.supersede(p.SupersedeParams(old=old.id, by=new.id, project="alpha"))
    assert ids(query(engine, "release train", asOf="2024-12-01")) == []
    assert ids(query(engine, "release train", asOf="2025-01-15")) == [old.id]
    assert set(ids(query(engine, "release train", asOf="2025-02-15"))) == {old.id, new.id}
    assert ids(query(engine, "release train", asOf="2025-03-15")) == [new.id]


def test_future_validity_is_not_visible_now(engine):
    store(engine, "From next year we use Python 3.14", validFrom="2999-01-01")
    assert query(engine, "python").results == []
    assert len(query(engine, "python", validAt="2999-06-01").results) == 1


# ------------------------------------------------------------------ feedback and review


def test_feedback_records_signal_with_query_and_flags_at_minus_three(engine):
    m = store(engine, "Run migrations by hand")
    r1 = engine.feedback(p.FeedbackParams(id=m.id, signal="unhelpful", project="alpha",
                                          query="how to migrate"))
    assert (r1.score, r1.trust, r1.transition) == (-1, "candidate", None)
    r2 = engine.feedback(p.FeedbackParams(id=m.id, signal="outdated", project="alpha"))
    assert (r2.score, r2.trust) == (-3, "flagged")
    assert (r2.transition.from_trust, r2.transition.to_trust) == ("candidate", "flagged")
    rows = engine.db.read("SELECT signal, delta, score_after, query FROM feedback ORDER BY seq")
    assert [tuple(r) for r in rows] == [
        ("unhelpful", -1, -1, "how to migrate"), ("outdated", -2, -3, None)]
    queue = engine.review(p.ReviewParams(action="list", project="alpha")).memories
    assert [q.id for q in queue] == [m.id]
    # the score recovers: the flag is left again, not kept forever
    r3 = engine.feedback(p.FeedbackParams(id=m.id, signal="helpful", project="alpha"))
    assert (r3.score, r3.trust) == (-2, "candidate")
    assert engine.review(p.ReviewParams(action="list", project="alpha")).memories == []


def test_review_verbs_leave_every_state_and_are_recorded(engine):
    m = store(engine, "Prefer composition over inheritance")
    for _ in range(3):
        engine.feedback(p.FeedbackParams(id=m.id, signal="unhelpful", project="alpha"))
    assert query(engine, "composition").results == []
    approved = engine.review(p.ReviewParams(action="approve", id=m.id, project="alpha",
                                            note="still true"))
    assert approved.transition.to_trust == "verified" and approved.memories[0].trust == "verified"
    assert ids(query(engine, "composition")) == [m.id]
    engine.review(p.ReviewParams(action="reject", id=m.id, project="alpha"))
    assert query(engine, "composition").results == []
    rejected = engine.review(p.ReviewParams(action="list", project="alpha", state="rejected"))
    assert [x.id for x in rejected.memories] == [m.id]
    engine.review(p.ReviewParams(action="restore", id=m.id, project="alpha"))
    assert ids(query(engine, "composition")) == [m.id]
    with pytest.raises(Refused):
        engine.review(p.ReviewParams(action="restore", id=m.id, project="alpha"))
    with pytest.raises(InvalidInput) as err:
        engine.review(p.ReviewParams(action="approve", project="alpha"))
    assert err.value.field == "id"
    rows = engine.db.read("SELECT from_trust, to_trust, cause, note FROM trust_transitions "
                          "ORDER BY seq")
    assert [tuple(r) for r in rows] == [
        ("candidate", "flagged", "feedback", None),
        ("flagged", "verified", "approve", "still true"),
        ("verified", "rejected", "reject", None),
        ("rejected", "candidate", "restore", None),
    ]


# ------------------------------------------------------------------ forgetting


def test_forget_logs_reason_preview_and_removes_the_memory(engine):
    old = store(engine, "Old staging note")
    m = store(engine, "The staging password rotates monthly", type="fact")
    engine.supersede(p.SupersedeParams(old=old.id, by=m.id, project="alpha"))
    r = engine.forget(p.ForgetParams(id=m.id, reason="user_deleted", project="alpha"))
    assert r.reason == "user_deleted"
    with pytest.raises(NotFound) as err:
        engine.get(p.GetParams(id=m.id, project="alpha"))
    assert "user_deleted" in str(err.value)
    assert query(engine, "staging password").results == []
    assert count_rows(engine, "edges") == 0
    fts = engine.db.read("SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'password'")
    assert fts[0][0] == 0
    log = engine.forgotten(p.ForgottenParams(project="alpha")).entries
    assert [(e.memory_id, e.reason, e.type) for e in log] == [(m.id, "user_deleted", "fact")]
    assert "staging password" in log[0].preview
    assert engine.forgotten(p.ForgottenParams(project="alpha", reason="decay")).entries == []
    assert engine.forgotten(p.ForgottenParams(project="beta")).entries == []
    with pytest.raises(InvalidInput) as err:
        p.parse(p.ForgetParams, {"id": m.id, "reason": "bored", "project": "alpha"})
    assert err.value.field == "reason"


def test_a_failure_inside_forget_leaves_nothing_half_written(engine):
    m = store(engine, "Keep me whole")
    with engine.db.transaction() as conn:  # inject a real failure at the last step
        conn.execute("CREATE TRIGGER boom BEFORE INSERT ON audit WHEN new.op = 'forget' "
                     "BEGIN SELECT RAISE(ABORT, 'injected'); END")
    with pytest.raises(sqlite3.IntegrityError):
        engine.forget(p.ForgetParams(id=m.id, reason="user_deleted", project="alpha"))
    assert engine.get(p.GetParams(id=m.id, project="alpha")).content == "Keep me whole"
    assert count_rows(engine, "forgetting_log") == 0 and count_rows(engine, "tombstones") == 0
    assert ids(query(engine, "keep whole")) == [m.id]


def test_a_failure_inside_store_leaves_nothing_half_written(engine):
    with engine.db.transaction() as conn:
        conn.execute("CREATE TRIGGER boom BEFORE INSERT ON audit "
                     "BEGIN SELECT RAISE(ABORT, 'injected'); END")
    with pytest.raises(sqlite3.IntegrityError):
        store(engine, "never half written")
    assert count_rows(engine, "memories") == 0
    assert engine.db.read("SELECT count(*) FROM memories_fts")[0][0] == 0


# ------------------------------------------------------------------ audit, stats


def test_audit_is_append_only_and_names_the_front(engine):
    m = store(engine, "Audited fact")
    engine.feedback(p.FeedbackParams(id=m.id, signal="helpful", project="alpha"))
    entries = engine.audit(p.AuditParams(project="alpha", id=m.id)).entries
    assert [e.op for e in entries] == ["feedback", "store"]
    assert {e.front for e in entries} == {"test"}
    for sql in ("UPDATE audit SET op = 'x'", "DELETE FROM audit"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            with engine.db.transaction() as conn:
                conn.execute(sql)
    assert engine.audit(p.AuditParams(project="beta")).entries == []


def test_stats_count_only_the_project(engine):
    a = store(engine, "one", type="decision")
    store(engine, "two")
    store(engine, "three", project="beta")
    engine.forget(p.ForgetParams(id=a.id, reason="dedup", project="alpha"))
    s = engine.stats(p.StatsParams(project="alpha"))
    assert (s.memories, s.forgotten, s.tombstones) == (1, 1, 1)
    assert s.by_type == {"note": 1} and s.schema_version >= 2


# ------------------------------------------------------------------ maintenance


def test_maintain_expires_by_valid_until_and_ttl_and_keeps_superseded(engine, clock, tmp_path):
    clock.set("2025-01-01T00:00:00Z")
    gone = store(engine, "Freeze until the release", validUntil="2025-01-10")
    old = store(engine, "Old policy")
    new = store(engine, "New policy", validFrom="2025-01-02")
    engine.supersede(p.SupersedeParams(old=old.id, by=new.id, project="alpha"))
    keep = store(engine, "Lasting convention", type="convention")
    clock.set("2025-02-01T00:00:00Z")
    r = engine.maintain(p.MaintainParams(project="alpha"))
    assert r.expired == [gone.id] and r.failed == []
    assert {m.id for m in engine.list(p.ListParams(project="alpha")).memories} == {
        old.id, new.id, keep.id}
    log = engine.forgotten(p.ForgottenParams(project="alpha", reason="ttl_expired")).entries
    assert [e.memory_id for e in log] == [gone.id]


def test_maintain_ttl_per_type(tmp_path, clock):
    from memls.engine import Engine

    data = tmp_path / "d"
    data.mkdir()
    (data / "config.toml").write_text("[ttl_days]\nnote = 30\n")
    clock.set("2025-01-01T00:00:00Z")
    with Engine.open(data, clock=clock, vectors=False) as engine:
        note = store(engine, "A passing note")
        decision = store(engine, "A lasting decision", type="decision")
        clock.set("2025-01-20T00:00:00Z")
        assert engine.maintain(p.MaintainParams(project="alpha")).expired == []
        clock.set("2025-02-05T00:00:00Z")
        assert engine.maintain(p.MaintainParams(project="alpha")).expired == [note.id]
        assert engine.get(p.GetParams(id=decision.id, project="alpha"))


def test_failed_maintenance_goes_to_dead_letters_and_is_retried(engine, clock):
    clock.set("2025-01-01T00:00:00Z")
    stuck = store(engine, "Stuck memory", validUntil="2025-01-02")
    free = store(engine, "Free memory", validUntil="2025-01-02")
    with engine.db.transaction() as conn:
        conn.execute(f"CREATE TRIGGER stuck BEFORE DELETE ON memories WHEN old.id = '{stuck.id}' "
                     "BEGIN SELECT RAISE(ABORT, 'disk says no'); END")
    clock.set("2025-02-01T00:00:00Z")
    r = engine.maintain(p.MaintainParams(project="alpha"))
    assert r.expired == [free.id]
    assert [(d.memory_id, d.attempts) for d in r.failed] == [(stuck.id, 1)]
    assert "disk says no" in r.failed[0].error
    again = engine.maintain(p.MaintainParams(project="alpha"))
    assert [(d.memory_id, d.attempts) for d in again.failed] == [(stuck.id, 2)]
    assert engine.dead_letters(p.MaintainParams(project="alpha")).failed[0].attempts == 2
    assert engine.dead_letters(p.MaintainParams(project="beta")).failed == []
    with engine.db.transaction() as conn:
        conn.execute("DROP TRIGGER stuck")
    fixed = engine.maintain(p.MaintainParams(project="alpha"))
    assert fixed.expired == [stuck.id] and fixed.retried == 1 and fixed.failed == []
    assert engine.stats(p.StatsParams(project="alpha")).dead_letters == 0


# ------------------------------------------------------------------ export / import


def _populated(engine, clock):
    clock.set("2025-06-01T00:00:00Z")
    a = store(engine, "We use yarn", validFrom="2025-01-01", type="decision")
    b = store(engine, "We use pnpm now", validFrom="2025-02-01", type="decision")
    engine.supersede(p.SupersedeParams(old=a.id, by=b.id, project="alpha"))
    c = store(engine, "Lint with ruff", type="convention")
    for _ in range(3):
        engine.feedback(p.FeedbackParams(id=c.id, signal="unhelpful", project="alpha",
                                         query="lint"))
    engine.review(p.ReviewParams(action="approve", id=c.id, project="alpha", note="ok"))
    d = store(engine, "Temporary")
    engine.forget(p.ForgetParams(id=d.id, reason="user_deleted", project="alpha"))
    store(engine, "Other project", project="beta")
    return a, b, c


def test_export_import_round_trips_exactly(engine, clock, tmp_path):
    from memls.engine import Engine

    _populated(engine, clock)
    exported = list(engine.export("alpha"))
    tables = {line.get("table") for line in exported[1:]}
    assert {"memories", "edges", "feedback", "trust_transitions", "forgetting_log",
            "tombstones", "audit"} <= tables
    assert all(line["row"]["project"] == "alpha" for line in exported[1:])
    import json

    lines = [json.dumps(x) for x in exported]
    with Engine.open(tmp_path / "other", clock=clock, vectors=False) as fresh:
        counts = fresh.import_("alpha", lines)
        assert counts["memories"] == 3 and counts["edges"] == 1
        again = list(fresh.export("alpha"))
        # every exported line comes back exactly, plus the import's own audit entry
        assert again[: len(exported)] == exported
        assert [x["row"]["op"] for x in again[len(exported):]] == ["import"]
        a_results = fresh.query(p.QueryParams(query="yarn", project="alpha",
                                              valid_at="2025-01-15"))
        assert [h.content for h in a_results.results] == ["We use yarn"]
        with pytest.raises(Refused):  # importing twice conflicts: all or nothing
            fresh.import_("alpha", lines)
        assert fresh.stats(p.StatsParams(project="alpha")).memories == 3


def test_import_refuses_bad_files_and_other_projects(engine, clock, tmp_path):
    import json

    _populated(engine, clock)
    lines = [json.dumps(x) for x in engine.export("alpha")]
    with pytest.raises(InvalidInput, match="not 'beta'"):
        engine.import_("beta", lines)
    with pytest.raises(InvalidInput, match="line 1"):
        engine.import_("alpha", ["{not json"])
    with pytest.raises(InvalidInput, match="header"):
        engine.import_("alpha", lines[1:])
    assert engine.stats(p.StatsParams(project="beta")).memories == 1


def test_dates_outside_four_digit_years_are_refused(engine):
    for bad in ("0005-01-01", "9999-12-31T23:00:00-05:00"):
        with pytest.raises(InvalidInput) as err:
            store(engine, "x", validFrom=bad)
        assert err.value.field == "validFrom"
    assert count_rows(engine, "memories") == 0


def test_import_refuses_an_edge_into_another_project(engine, clock):
    import json

    a = store(engine, "Alpha fact", project="alpha")
    b = store(engine, "Beta fact", project="beta")
    lines = [json.dumps(x) for x in engine.export("alpha")]
    edge = {"table": "edges", "row": {"src": a.id, "dst": b.id, "kind": "supersedes",
                                      "project": "alpha", "created_at": "2025-01-01",
                                      "confidence": None, "status": None, "detail": None,
                                      "closed_at": None}}
    engine.forget(p.ForgetParams(id=a.id, reason="user_deleted", project="alpha"))
    with pytest.raises(InvalidInput, match="edges.dst names memory .* another project"):
        engine.import_("alpha", [lines[0], lines[1], json.dumps(edge)])
    assert engine.get(p.GetParams(id=b.id, project="beta")).superseded_by == []


@pytest.mark.parametrize("table, column", [
    ("forgetting_log", "memory_id"), ("tombstones", "memory_id"), ("feedback", "memory_id"),
    ("trust_transitions", "memory_id"), ("audit", "memory_id"), ("dead_letters", "memory_id"),
])
def test_import_refuses_any_row_naming_another_projects_memory(engine, table, column):
    """One project's import must not break another project: a log row of alpha naming beta's
    memory used to be accepted, and beta's next forget of it then failed with a traceback (the
    forgetting log's unique key has no project)."""
    import json

    alpha = store(engine, "Alpha fact", project="alpha")
    beta = store(engine, "Beta fact", project="beta")
    engine.forget(p.ForgetParams(id=alpha.id, reason="user_deleted", project="alpha"))
    lines = [json.dumps(x) for x in engine.export("alpha")]
    rows = [json.loads(line) for line in lines[1:]]
    model = next(r for r in rows if r["table"] == table) if any(
        r["table"] == table for r in rows) else None
    if model is None:  # a table alpha has no row of: build one from the schema
        names = [r[1] for r in engine.db.read(f"PRAGMA table_info({table})") if r[1] != "seq"]
        model = {"table": table, "row": {n: 1 if n in ("delta", "score_after", "attempts")
                                           else "x" for n in names}}
        model["row"]["project"] = "alpha"
    forged = {"table": table, "row": {**model["row"], column: beta.id}}
    before = [json.dumps(x) for x in engine.export("beta")]
    with pytest.raises(InvalidInput, match="another project"):
        engine.import_("alpha", [lines[0], json.dumps(forged)])
    # nothing changed, and beta's own forget still works
    assert [json.dumps(x) for x in engine.export("beta")] == before
    engine.forget(p.ForgetParams(id=beta.id, reason="user_deleted", project="beta"))
    assert engine.forgotten(p.ForgottenParams(project="beta")).entries[0].memory_id == beta.id


def test_storing_rejected_content_again_says_so(engine):
    m = store(engine, "Use global variables for config")
    engine.review(p.ReviewParams(action="reject", id=m.id, project="alpha"))
    with pytest.raises(Refused, match="rejected on review"):
        store(engine, "use global variables for config")
    engine.review(p.ReviewParams(action="restore", id=m.id, project="alpha"))
    assert store(engine, "use global variables for config").duplicate
