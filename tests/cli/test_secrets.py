"""The installed command line as a subprocess: a secret is refused with one line and exit 2
(nothing stored), --redact stores it redacted (store, ingest, import), doctor --secrets finds
what an older version stored and --repair redacts it; a restatement is a near duplicate."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

AWS = "AKIA" + "Q3EGT7QW2M5XZ4NA"  # FAKE, in AWS's format
TEXT = f"CI uploads artifacts to S3 with AWS_ACCESS_KEY_ID={AWS}"


def memls(data, *args, stdin=None):
    env = {**os.environ, "MEMLS_DATA_DIR": str(data)}
    return subprocess.run(
        [sys.executable, "-m", "memls", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        input=stdin,
    )


def lexical(tmp_path):
    data = tmp_path / "data"
    data.mkdir(mode=0o700, parents=True)
    (data / "config.toml").write_text("[index]\nvectors = false\n")
    return data


def test_store_refuses_with_one_line_exit_2_and_redacts_when_asked(tmp_path):
    data = lexical(tmp_path)
    out = memls(data, "store", "-p", "w", TEXT)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith("memls: error: TEXT: holds a secret: AWS Access Key")
    assert "line 1, column 51" in out.stderr and "--redact" in out.stderr
    listed = memls(data, "list", "-p", "w", "--json")
    assert json.loads(listed.stdout)["memories"] == []
    out = memls(data, "store", "-p", "w", TEXT, "--redact", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["memory"]["content"] == (
        "CI uploads artifacts to S3 with AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]"
    )


def test_ingest_and_import_refuse_or_redact(tmp_path):
    data = lexical(tmp_path)
    jsonl = tmp_path / "m.jsonl"
    jsonl.write_text(
        json.dumps({"text": "Deploys go out on Tuesdays"})
        + "\n"
        + json.dumps({"text": TEXT})
        + "\n"
    )
    out = memls(data, "ingest", str(jsonl), "-p", "w")
    assert out.returncode == 2 and "item 2: holds a secret" in out.stderr
    assert out.stderr.count("\n") == 1
    out = memls(data, "ingest", str(jsonl), "-p", "w", "--redact", "--json")
    assert out.returncode == 0 and json.loads(out.stdout)["stored"] == 2
    export = memls(data, "export", "-p", "w").stdout
    assert AWS not in export
    # the same export with the secret put back, as an older version would have written it
    leaky = export.replace("[REDACTED:aws-access-key]", AWS)
    other = lexical(tmp_path / "other")
    out = memls(other, "import", "-", "-p", "w", stdin=leaky)
    assert out.returncode == 2 and "aws-access-key" in out.stderr
    assert out.stderr.count("\n") == 1
    out = memls(other, "import", "-", "-p", "w", "--redact", stdin=leaky)
    assert out.returncode == 0, out.stderr
    assert AWS not in memls(other, "export", "-p", "w").stdout


def test_doctor_secrets_finds_and_repair_redacts(tmp_path):
    data = lexical(tmp_path)
    stored = json.loads(memls(data, "store", "-p", "w", "S3 key placeholder", "--json").stdout)
    with sqlite3.connect(data / "memls.sqlite3") as conn:  # an older version's row
        conn.execute("UPDATE memories SET content = ? WHERE id = ?", (TEXT, stored["id"]))
    out = memls(data, "doctor", "-p", "w", "--secrets")
    assert out.returncode == 1
    assert f"secret: {stored['id']} aws-access-key at line 1, column 51" in out.stdout
    out = memls(data, "doctor", "-p", "w", "--secrets", "--repair")
    assert f"redacted: {stored['id']}" in out.stdout
    got = json.loads(memls(data, "get", stored["id"], "-p", "w", "--json").stdout)
    assert got["content"] == (
        "CI uploads artifacts to S3 with AWS_ACCESS_KEY_ID=[REDACTED:aws-access-key]"
    )
    out = memls(data, "doctor", "-p", "w", "--secrets")
    assert "secret:" not in out.stdout


def test_store_a_restatement_is_a_near_duplicate_and_force_stores_it(tmp_path):
    data = tmp_path / "data"  # the full engine: the near-duplicate rule needs the models
    first = memls(data, "store", "-p", "w", "-t", "decision", "Email is sent through Amazon SES.")
    assert first.returncode == 0, first.stderr
    again = memls(
        data, "store", "-p", "w", "-t", "decision", "We send email with Amazon SES.", "--wait"
    )
    assert again.returncode == 0 and again.stdout.startswith("near duplicate: m_"), again.stdout
    assert "seen again 1 times" in again.stdout
    forced = memls(
        data, "store", "-p", "w", "-t", "decision", "We send email with Amazon SES.", "--force"
    )
    assert forced.returncode == 0 and forced.stdout.startswith("stored m_")


def test_doctor_repairs_a_store_an_older_detector_wrote(tmp_path):
    """A data directory written by the version whose detector was detect-secrets alone
    (tests/data/stores/before-betterleaks): opened by this one, migrated, its secrets found
    by this detector and redacted, the plain memory left as it was."""
    data = tmp_path / "data"
    shutil.copytree(Path(__file__).parents[1] / "data" / "stores" / "before-betterleaks", data)
    out = memls(data, "doctor", "-p", "legacy", "--secrets")
    assert out.returncode == 1
    found = sorted(
        line.split()[2] for line in out.stdout.splitlines() if line.startswith("secret:")
    )
    assert found == ["command-line-password", "prose-password", "url-password"], out.stdout
    out = memls(data, "doctor", "-p", "legacy", "--secrets", "--repair")
    assert out.stdout.count("redacted: ") == 3, out.stdout
    texts = {
        m["content"]
        for m in json.loads(memls(data, "list", "-p", "legacy", "--json").stdout)["memories"]
    }
    assert texts == {
        "Orders use postgres://admin:[REDACTED:url-password]@db.internal:5432/app for now",
        "Deploy with curl -u deploy:[REDACTED:command-line-password] "
        "https://deploy.example.com/hook",
        "The SMTP password is [REDACTED:prose-password] (ask ops before rotating)",
        "We deploy on Tuesdays after the standup",
    }
    assert "secret:" not in memls(data, "doctor", "-p", "legacy", "--secrets").stdout
