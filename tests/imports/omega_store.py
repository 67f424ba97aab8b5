"""Make an OMEGA store through OMEGA's own code (run by the Python of OMEGA's venv, not by
pytest): `python omega_store.py scenario HOME PROJECT_A PROJECT_B` or
`python omega_store.py bulk HOME PROJECT TEXTS.json`. Prints the ids it made as JSON.

Run with the working directory at PROJECT_A: OMEGA writes its working directory into the
`project` column of a memory stored without a project, so the unscoped rows look like A's to a
reader that trusts that column.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

from omega.sqlite_store import SQLiteStore  # type: ignore[import-not-found]


def scenario(home: str, a: str, b: str) -> dict[str, Any]:
    db = SQLiteStore(db_path=os.path.join(home, "omega.db"))
    ids: dict[str, str] = {}

    def put(
        name: str, text: str, project: str | None, event_type: str = "decision", **more: Any
    ) -> None:
        meta: dict[str, Any] = {"event_type": event_type, **more}
        if project is not None:
            meta["project"] = project
        # no automatic supersession: the scenario says which memory replaces which
        ids[name] = db.store(content=text, metadata=meta, allow_supersession=False)

    put("old", "The public API uses REST with JSON payloads on every endpoint.", a)
    put("new", "The public API moved to GraphQL on every endpoint since March.", a)
    ok, error = db.supersede_with_replacement(ids["old"], ids["new"], reason="moved to GraphQL")
    assert ok, error
    put("flagged", "Releases go out on Friday afternoons after the weekly demo.", a)
    db.record_feedback(ids["flagged"], "outdated", "we stopped that")
    db.record_feedback(ids["flagged"], "outdated", "still wrong")  # -4: flagged for review
    put("liked", "The test suite runs with pytest and pytest-xdist on two workers.", a, "fact")
    db.record_feedback(ids["liked"], "helpful")
    put(
        "pref",
        "Prefer small pull requests that change one thing each.",
        a,
        "user_preference",
        tags=["review", "git"],
    )
    put("lesson", "Pin the ONNX runtime version: 1.17 broke the tokenizer.", a, "lesson_learned")
    db.add_edge(ids["lesson"], ids["liked"], "related")
    put("secret", "The CI deploy key is ghp_4fT9kQ2mZx7LpW3nR8vB1cY6dH0jS5aE2gU9 for now.", a)
    put("restated", "Business logic of the mobile apps is shared with Kotlin Multiplatform.", a)
    put("dup", "Database migrations are numbered SQL files applied at start.", a)
    put("claim", "Sessions are kept in Redis with a one hour expiry.", a)
    put("counter", "Sessions are not kept in Redis; they live in signed cookies.", a)
    db.add_edge(ids["counter"], ids["claim"], "contradicts")
    put("replaced", "Logs are shipped to Loki by promtail on every host.", a)
    put("gone", "Logs are shipped to Loki by the OpenTelemetry collector.", a)
    ok, error = db.supersede_with_replacement(ids["replaced"], ids["gone"], reason="collector")
    assert ok, error
    db.delete_node(ids["gone"])  # tied to A: the memory it replaced names it
    put("dropped", "The staging cluster runs in eu-west-1.", a)
    db.delete_node(ids["dropped"])  # nothing of A names it any more: not tied
    put("b1", "Project B deploys with Ansible playbooks.", b)
    put("b2", "Project B keeps its secrets in Vault.", b)
    put("global_none", "Always answer in British English.", None, "user_preference")
    put("global_empty", "Commit messages use the imperative mood.", "", "user_preference")
    db.close()
    return ids


def bulk(home: str, project: str, texts_file: str) -> dict[str, Any]:
    """The memories of `texts_file` (a JSON list of texts) as memories of `project`, stored by
    OMEGA with a pseudo-embedding (OMEGA's model is not what is measured), each tenth
    superseding the one before it, each 50th flagged for review."""
    with open(texts_file, encoding="utf-8") as handle:
        texts = json.load(handle)
    db = SQLiteStore(db_path=os.path.join(home, "omega.db"))
    # OMEGA's free tier stops writes at 5,000 memories; its own test override lifts the cap
    # (a store past it is what an OMEGA Pro user, or a grandfathered one, has)
    db._max_nodes_override = len(texts) + 1
    kinds = ["decision", "lesson_learned", "user_preference", "constraint", "fact"]
    made: list[str] = []
    for n, text in enumerate(texts):
        digest = hashlib.sha256(text.encode()).digest()
        vector = [((digest[i % 32] + i) % 97) / 97.0 - 0.5 for i in range(384)]
        meta = {"event_type": kinds[n % len(kinds)], "project": project}
        node = db.store(content=text, metadata=meta, embedding=vector, skip_inference=True)
        made.append(node)
        if n % 10 == 9:
            ok, error = db.supersede_with_replacement(made[-2], node, reason="newer")
            assert ok, error
        if n % 50 == 0:
            for _ in range(3):
                db.record_feedback(node, "unhelpful")
    db.close()
    return {"count": len(made)}


if __name__ == "__main__":
    verb = sys.argv[1]
    if verb == "scenario":
        out = scenario(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        out = bulk(sys.argv[2], sys.argv[3], sys.argv[4])
    print(json.dumps(out))
