"""Near duplicates (real models, real Chroma): a store is acknowledged at once; once the batch
is indexed, a restatement of an earlier memory of the same type (indexed or not, or an earlier
item of the same batch) is merged into it — counted on it, its own row gone, audited and told
as `memory/changed` op "merge" — and ingest answers it with that memory's id. A related or
contradicting memory, another type, force, or a note's unit are kept."""

from __future__ import annotations

from engine_helpers import count_rows, store
from memls import protocol as p

OLD = "The mobile apps share business logic through Kotlin Multiplatform."
RESTATED = "Business logic of the mobile apps is shared with Kotlin Multiplatform."


def memory(engine, memory_id):
    found = engine.list(p.ListParams(project="alpha", limit=100)).memories
    return next((m for m in found if m.id == memory_id), None)


def test_a_restatement_is_acknowledged_then_merged_into_the_earlier_memory(vengine, clock):
    first = store(vengine, OLD, type="decision")
    assert vengine.flush()
    clock.advance(hours=1)
    heard = []
    vengine.listeners.append(lambda method, payload: heard.append((method, payload)))
    again = store(vengine, RESTATED, type="decision")
    assert again.created and again.duplicate is False and again.id != first.id
    assert vengine.flush()
    assert memory(vengine, again.id) is None
    kept = memory(vengine, first.id)
    assert kept.content == OLD and kept.seen_again == 1
    assert kept.last_seen_at.startswith("2025-01-01T01:00:00")
    assert count_rows(vengine, "memories") == 1
    merges = [x for m, x in heard if m == "memory/changed" and x.op == "merge"]
    assert [x.ids for x in merges] == [[again.id, first.id]]
    audit = vengine.audit(p.AuditParams(project="alpha", id=again.id, limit=5)).entries
    assert [e.op for e in audit][:1] == ["merge"]
    # its text again: an exact duplicate of nothing stored, a restatement of the earlier one
    assert store(vengine, RESTATED, type="decision").created


def test_a_restatement_of_a_memory_not_indexed_yet_is_merged(vengine):
    first = store(vengine, OLD, type="decision")  # no flush: the same batch, most likely
    again = store(vengine, RESTATED, type="decision")
    assert vengine.flush()
    assert memory(vengine, again.id) is None and memory(vengine, first.id).seen_again == 1


def test_ingest_answers_a_restatement_with_the_memory_it_restates(vengine):
    first = store(vengine, OLD, type="decision")
    assert vengine.flush()
    items = [
        p.StoreParams(text=RESTATED, type="decision"),
        p.StoreParams(text="Deploys go out on Tuesdays after the review meeting.", type="fact"),
        p.StoreParams(text="We deploy on Tuesdays, after the review meeting.", type="fact"),
    ]
    r = vengine.ingest(p.IngestParams(project="alpha", items=items))
    assert r.ids[0] == first.id and r.indexed
    assert r.stored + r.duplicates == 3 and r.duplicates >= 1
    assert count_rows(vengine, "memories") == 1 + r.stored


def test_related_and_contradicting_memories_are_stored(vengine):
    first = store(vengine, OLD, type="decision")
    assert vengine.flush()
    ids = [
        store(vengine, text, type="decision").id
        for text in (
            "The Android app's UI is written with Jetpack Compose.",
            "The mobile apps share business logic through a React Native bridge.",
        )
    ]
    assert vengine.flush()
    assert all(memory(vengine, i) is not None for i in ids)
    assert memory(vengine, first.id).seen_again == 0


def test_a_restatement_of_another_type_is_stored(vengine):
    store(vengine, OLD, type="decision")
    r = store(vengine, RESTATED, type="fact")
    assert vengine.flush()
    assert memory(vengine, r.id) is not None


def test_force_stores_a_restatement(vengine):
    store(vengine, OLD, type="decision")
    r = store(vengine, RESTATED, type="decision", force=True)
    assert vengine.flush()
    assert memory(vengine, r.id) is not None


def test_an_exact_duplicate_is_counted_at_once(vengine):
    first = store(vengine, OLD)
    again = store(vengine, OLD)
    assert (again.id, again.duplicate, again.memory.seen_again) == (first.id, True, 1)


def test_the_same_sentence_with_a_word_swapped_is_stored(vengine):
    store(vengine, "owner records item 17: alpha bravo service uses port 1017")
    r = store(vengine, "one records item 17: alpha bravo service uses port 1017")
    assert vengine.flush()
    assert memory(vengine, r.id) is not None
