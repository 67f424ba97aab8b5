"""How a text is worded (`memls.conflicts.phrasing`): named things, content words, tokens,
hedges and the systems a statement is about."""

from __future__ import annotations

from memls.conflicts import phrasing


def test_entities_are_names_identifiers_and_code_not_link_targets() -> None:
    text = (
        "We use GitHub Actions and `pytest -q` on node.js 20; see "
        "[the docs](https://docs.example.org/Guide) and #deploys."
    )
    names = phrasing.entities(text)
    assert {"github", "action", "pytest", "node.js", "#deploys"} <= names
    assert not any("example" in n or "guide" in n for n in names)


def test_a_system_opening_a_sentence_is_its_topic() -> None:
    assert phrasing.topics("checkout-service exchanges messages in Protobuf.") == {
        "checkout-service"
    }
    assert phrasing.topics("We deploy with docker-compose.") == frozenset()
    assert phrasing.apart("checkout-service uses Protobuf.", "inventory-store uses Protobuf.")
    assert not phrasing.apart(
        "order-service replaces legacy-orders.", "legacy-orders handles every checkout."
    )


def test_hedges_additions_words_and_tokens() -> None:
    assert phrasing.hedged("We could use Redis.") and not phrasing.hedged("We use Redis.")
    assert phrasing.additive("Alice also owns billing.")
    assert not phrasing.additive("Alice owns billing.")
    assert phrasing.words("Tokens expire after a month.") == {"token"}
    assert phrasing.tokens("The lint job") == ("", "lint", "job")
