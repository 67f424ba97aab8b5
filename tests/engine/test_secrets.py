"""Secrets on the engine's write paths: refused naming the kind and where (nothing stored,
nothing audited, nothing queued for the index), or redacted when asked; doctor finds and
repairs what an older version stored."""

from __future__ import annotations

import json

import pytest

from engine_helpers import count_rows, store
from memls import protocol as p
from memls.engine import Engine
from memls.errors import InvalidInput
from memls.secrets import plugins

# FAKE credentials in the published formats (not real keys)
AWS = "AKIAQ3EGT7QW2M5XZ4NA"
GITHUB = "ghp_" + "Wq7ZkR2vTn9xLp4mYc8bHs3dJf6gKa1eUo5N"  # FAKE
PG = "postgres://app:Zq9%23vLw2xTe4@db.internal:5432/orders"


def test_a_memory_with_a_secret_is_refused_naming_kind_and_where(engine):
    with pytest.raises(InvalidInput) as exc:
        store(engine, f"Deploy bot\nuses the key {AWS} for S3 uploads")
    assert exc.value.field == "text"
    assert "aws-access-key" in exc.value.message
    assert "line 2, column 14" in exc.value.message
    assert count_rows(engine, "memories") == 0
    assert count_rows(engine, "audit") == 0
    assert count_rows(engine, "outbox") == 0


def test_redact_replaces_the_secret_before_anything_is_written(engine):
    r = store(engine, f"Release workflow pushes tags with {GITHUB}.", redact=True)
    assert r.created
    assert r.memory.content == "Release workflow pushes tags with [REDACTED:github-token]."
    dump = "\n".join(json.dumps(row) for row in engine.export("alpha"))
    assert GITHUB not in dump and GITHUB[4:20] not in dump


def test_credentials_in_a_url_keep_the_rest_of_the_url(engine):
    r = store(engine, f"The orders app connects with DATABASE_URL={PG}", redact=True)
    assert r.memory.content == (
        "The orders app connects with DATABASE_URL="
        "postgres://app:[REDACTED:basic-auth-credentials]@db.internal:5432/orders"
    )


def test_the_privacy_setting_redacts_without_asking(tmp_path, clock):
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "config.toml").write_text('[privacy]\nsecrets = "redact"\n')
    with Engine.open(data, front="test", clock=clock, vectors=False) as engine:
        r = store(engine, f"export AWS_ACCESS_KEY_ID={AWS}")
    assert r.memory.content == "export AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]"


def test_ordinary_technical_text_is_stored(engine):
    for text in (
        "LOG_LEVEL=debug and DATABASE_HOST=db.internal in staging",
        "Pin the base image by digest: sha256:4c5e3d2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f",
        "password_hash = bcrypt(password) in the accounts service",
        "SECRET_KEY=${SECRET_KEY} is read from the environment",
        "Commit 9b94740 fixed the flaky filter test",
    ):
        assert store(engine, text).created, text


def test_ingest_refuses_all_naming_the_item_or_redacts_all(engine):
    items = [{"text": "Deploys go out on Tuesdays"}, {"text": f"CI uses {AWS}"}]
    with pytest.raises(InvalidInput) as exc:
        engine.ingest(p.parse(p.IngestParams, {"project": "alpha", "items": items}))
    assert exc.value.message.startswith("item 2: holds a secret")
    assert count_rows(engine, "memories") == 0
    r = engine.ingest(p.parse(p.IngestParams, {"project": "alpha", "items": items, "redact": True}))
    assert r.stored == 2
    assert engine.get(p.GetParams(id=r.ids[1], project="alpha")).content == (
        "CI uses [REDACTED:aws-access-key]"
    )


def test_import_refuses_a_memory_with_a_secret_naming_its_line(engine, tmp_path, clock):
    store(engine, f"CI uses {AWS}", redact=True)
    lines = [json.dumps(line) for line in engine.export("alpha")]
    row = json.loads(lines[1])
    row["row"]["content"] = f"CI uses {AWS}"
    lines[1] = json.dumps(row)
    with Engine.open(tmp_path / "other", front="test", clock=clock, vectors=False) as other:
        with pytest.raises(InvalidInput) as exc:
            other.import_("alpha", lines)
        assert exc.value.field == "file"
        assert exc.value.message.startswith("line 2: memory ")
        assert "aws-access-key" in exc.value.message
        assert count_rows(other, "memories") == 0
        counts = other.import_("alpha", lines, redact=True)
        assert counts["memories"] == 1
        (only,) = other.list(p.ListParams(project="alpha")).memories
        assert only.content == "CI uses [REDACTED:aws-access-key]"


def test_doctor_finds_and_repairs_secrets_an_older_version_stored(engine):
    kept = store(engine, "Deploys go out on Tuesdays").id
    leaky = store(engine, "Placeholder for the S3 key").id
    # what an older version (no detector) wrote: the text straight into the row
    with engine.db.transaction() as conn:
        conn.execute(
            "UPDATE memories SET content = ? WHERE id = ?", (f"S3 uploads use {AWS}", leaky)
        )
    found = engine.doctor(p.DoctorParams(project="alpha", secrets=True))
    assert "1 memories hold secrets (memls doctor --secrets --repair redacts them)" in (
        found.problems
    )
    assert [(s.id, s.kind, s.line, s.column) for s in found.secrets] == [
        (leaky, "aws-access-key", 1, 16)
    ]
    assert found.redacted == []
    fixed = engine.doctor(p.DoctorParams(project="alpha", secrets=True, repair=True))
    assert fixed.redacted == [leaky]
    memory = engine.get(p.GetParams(id=leaky, project="alpha"))
    assert memory.content == "S3 uploads use [REDACTED:aws-access-key]"
    assert engine.get(p.GetParams(id=kept, project="alpha")).content == (
        "Deploys go out on Tuesdays"
    )
    again = engine.doctor(p.DoctorParams(project="alpha", secrets=True))
    assert again.secrets == []
    assert not [problem for problem in again.problems if "secret" in problem]
    audit = engine.db.read("SELECT op, detail FROM audit WHERE memory_id = ?", (leaky,))
    assert ("redact", json.dumps({"kinds": ["aws-access-key"]})) in [tuple(r) for r in audit]


def test_doctor_finds_and_repairs_a_secret_in_the_forgetting_log(engine):
    gone = store(engine, "Placeholder for the deploy token").id
    with engine.db.transaction() as conn:  # an older version's row, then forgotten
        conn.execute("UPDATE memories SET content = ? WHERE id = ?", (f"deploy uses {AWS}", gone))
    engine.forget(p.ForgetParams(id=gone, reason="user_deleted", project="alpha"))
    found = engine.doctor(p.DoctorParams(project="alpha", secrets=True))
    assert [(s.id, s.kind, s.place) for s in found.secrets] == [
        (gone, "aws-access-key", "forgetting_log")
    ]
    fixed = engine.doctor(p.DoctorParams(project="alpha", secrets=True, repair=True))
    assert fixed.redacted == [gone]
    (entry,) = engine.forgotten(p.ForgottenParams(project="alpha")).entries
    assert entry.preview == "deploy uses [REDACTED:aws-access-key]"


def test_a_feedback_query_is_kept_with_its_secret_redacted(engine):
    memory = store(engine, "Deploys go out on Tuesdays").id
    engine.feedback(
        p.FeedbackParams(id=memory, signal="helpful", query=f"deploy {AWS}", project="alpha")
    )
    (query,) = [r[0] for r in engine.db.read("SELECT query FROM feedback")]
    assert query == "deploy [REDACTED:aws-access-key]"


def test_doctor_finds_and_repairs_what_detect_secrets_alone_let_through(engine):
    # a password with a reserved character: detect-secrets' plugins (the detector before
    # Betterleaks and the URL reading) read no secret in it, so a store written then kept it
    text = "orders connect to postgres://admin:S3cr3tPassw0rd!@db.internal:5432/app"
    assert not list(plugins.line_secrets(text))
    leaky = store(engine, "Placeholder for the orders database").id
    with engine.db.transaction() as conn:  # the row as that version stored it
        conn.execute("UPDATE memories SET content = ? WHERE id = ?", (text, leaky))
    found = engine.doctor(p.DoctorParams(project="alpha", secrets=True))
    assert [(s.id, s.kind, s.line, s.column) for s in found.secrets] == [
        (leaky, "url-password", 1, 36)
    ]
    fixed = engine.doctor(p.DoctorParams(project="alpha", secrets=True, repair=True))
    assert fixed.redacted == [leaky]
    assert engine.get(p.GetParams(id=leaky, project="alpha")).content == (
        "orders connect to postgres://admin:[REDACTED:url-password]@db.internal:5432/app"
    )
    assert engine.doctor(p.DoctorParams(project="alpha", secrets=True)).secrets == []
