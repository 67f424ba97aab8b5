"""Near duplicates at store (real models, real Chroma): a restatement of a memory of the same
type returns the existing id with duplicate "near" and is counted on it; a related or
contradicting memory, another type, or force stores a new one."""

from __future__ import annotations

from engine_helpers import count_rows, store
from memls import protocol as p

OLD = "The mobile apps share business logic through Kotlin Multiplatform."
RESTATED = "Business logic of the mobile apps is shared with Kotlin Multiplatform."


def test_a_restatement_returns_the_existing_memory_and_counts_it(vengine, clock):
    first = store(vengine, OLD, type="decision")
    assert vengine.flush()
    clock.advance(hours=1)
    again = store(vengine, RESTATED, type="decision")
    assert (again.id, again.created, again.duplicate) == (first.id, False, "near")
    assert again.memory.content == OLD
    assert again.memory.seen_again == 1
    assert again.memory.last_seen_at.startswith("2025-01-01T01:00:00")
    assert count_rows(vengine, "memories") == 1


def test_a_restatement_of_a_memory_not_indexed_yet_is_found(vengine):
    first = store(vengine, OLD, type="decision")  # no flush: still in the outbox
    again = store(vengine, RESTATED, type="decision")
    assert (again.id, again.duplicate) == (first.id, "near")


def test_related_and_contradicting_memories_are_stored(vengine):
    first = store(vengine, OLD, type="decision")
    assert vengine.flush()
    for text in (
        "The Android app's UI is written with Jetpack Compose.",
        "The mobile apps share business logic through a React Native bridge.",
    ):
        r = store(vengine, text, type="decision")
        assert r.created and r.duplicate is False and r.id != first.id, text
    assert vengine.get(p.GetParams(id=first.id, project="alpha")).seen_again == 0


def test_a_restatement_of_another_type_is_stored(vengine):
    first = store(vengine, OLD, type="decision")
    r = store(vengine, RESTATED, type="fact")
    assert r.created and r.duplicate is False and r.id != first.id


def test_force_stores_a_restatement(vengine):
    first = store(vengine, OLD, type="decision")
    r = store(vengine, RESTATED, type="decision", force=True)
    assert r.created and r.duplicate is False and r.id != first.id


def test_an_exact_duplicate_is_counted_too(vengine):
    first = store(vengine, OLD)
    again = store(vengine, OLD)
    assert (again.id, again.duplicate, again.memory.seen_again) == (first.id, True, 1)


def test_the_same_sentence_with_a_word_swapped_is_stored(vengine):
    first = store(vengine, "owner records item 17: alpha bravo service uses port 1017")
    r = store(vengine, "one records item 17: alpha bravo service uses port 1017")
    assert r.created and r.duplicate is False and r.id != first.id
