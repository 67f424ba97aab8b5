"""memls.notes.document: sections, claims, a note's standing and the changes it records."""

from __future__ import annotations

import pytest

from memls.notes import (
    NoteFacts,
    Ref,
    comparable,
    is_claim,
    note_facts,
    note_number,
    parse,
    resolve_ref,
    section_of,
)
from memls.notes.sections import section_kind

ADR = """\
# 18. Dedicated ingress controllers

Date: 02/09/2020

## Status

❌ Rejected (see [019](019-Shared-Ingress-Controllers.md))

## Context

The platform currently has a single ingress controller for all namespaces.

## Options considered

- Keep one controller and add replicas to absorb the load.
- Run a shared pool of controllers behind one load balancer.

## Decision

We will create a separate ingress controller for every namespace in the cluster.

```yaml
ingressClass: per-namespace
```

| Namespace | Controller |
|-----------|------------|
| app-a     | nginx-a    |

## Consequences

Each namespace costs one more load balancer.

## References

- [ADR 12](012-one-cluster.md)
- https://kubernetes.io/docs/concepts/services-networking/ingress/
"""


def units_by_text(text: str) -> dict[str, object]:
    return {u.text.splitlines()[0][:40]: u for u in parse(text)}


def test_adr_units_know_their_section_and_whether_they_claim() -> None:
    units = parse(ADR)
    got = {(u.text.split()[0], u.section, u.claim) for u in units}
    assert ("Date:", "", False) in got  # a label line
    assert ("❌", "status", False) in got
    assert ("The", "context", False) in got
    assert ("Keep", "options", False) in got and ("Run", "options", False) in got
    assert ("We", "decision", True) in got
    assert ("```yaml", "decision", False) in got  # a code block on its own
    assert ("|", "decision", False) in got  # a table
    assert ("Each", "consequences", True) in got
    assert all(not u.claim for u in units if u.section == "references")
    claims = [u.text for u in units if u.claim]
    assert claims == [
        "We will create a separate ingress controller for every namespace in the cluster.",
        "Each namespace costs one more load balancer.",
    ]


def test_agent_file_rules_are_claims_without_a_section() -> None:
    text = "# AGENTS.md\n\n## Conventions\n\n- Use ruff for linting.\n- See [docs](docs/x.md)\n"
    units = parse(text)
    assert [(u.text, u.section, u.claim) for u in units] == [
        ("Use ruff for linting.", "", True),
        ("See [docs](docs/x.md)", "", False),  # a link list entry
    ]


def test_the_title_names_no_section_but_a_later_heading_does() -> None:
    text = (
        "# Configuration updates\n\nWe reload the config on SIGHUP.\n\n"
        "## Update 2021-03-04\n\nWe reload the config on file change instead.\n"
    )
    units = parse(text)
    assert [(u.section, u.claim) for u in units] == [("", True), ("update", True)]
    facts = note_facts(text)
    assert facts.records_change and facts.change_lines == (4,)


@pytest.mark.parametrize(
    ("heading", "kind"),
    [
        ("Status", "status"),
        ("Context and Problem Statement", "context"),
        ("Considered Options", "options"),
        ("Alternatives", "options"),
        ("Option: Raw txdata", "options"),
        ("Decision Outcome", "decision"),
        ("What’s proposed", "decision"),
        ("Consequences", "consequences"),
        ("UPDATE 2020-10-14", "update"),
        ("Amendment", "update"),
        ("See also", "references"),
        ("Node management", ""),
    ],
)
def test_section_kinds(heading: str, kind: str) -> None:
    assert section_kind(heading) == kind


def test_nearest_naming_heading_wins() -> None:
    assert section_of(["Decision", "Option: Custom EDN"]) == "options"
    assert section_of(["Decision", "Node management"]) == "decision"
    assert section_of(["Configuration updates", "Node management"], titled=True) == ""


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("We will use Amazon EKS for the main cluster.", True),
        ("[ADR 001](001-Use-AWS-hosted-elasticsearch.md)", False),
        ("https://example.org/some/page", False),
        ("Status: Accepted", False),
        ("Deciders: Ana, Bo", False),
        ("Accepted", False),
        ("Uses [Karpenter](https://karpenter.sh) to scale nodes on demand.", True),
        ("~~Product teams have confirmed their builds and deploys.~~", False),
        ("**pnpm**: v10+ (`npm install -g pnpm@10`)", True),  # a value given for a thing
        ("Version: 1.4", False),
    ],
)
def test_is_claim(text: str, claim: bool) -> None:
    assert is_claim(text) is claim


def test_rejected_status_with_see_reference() -> None:
    facts = note_facts(ADR, "docs/adr/018-Dedicated-Ingress-Controllers.md")
    assert facts.number == 18
    assert facts.status == "rejected"
    assert facts.status_text == "❌ Rejected (see 019)"
    assert facts.see == (
        Ref(
            relation="see",
            number=19,
            target="019-Shared-Ingress-Controllers.md",
            label="019",
            line=6,
        ),
    )
    assert not facts.current and not facts.records_change


def test_superseded_by_a_link_whose_label_has_a_full_stop() -> None:
    text = (
        "# 21. Multi-cluster\n\n## Status\n\n"
        "⌛️ Superseded by [036. Multi-cluster](036-multi-cluster.md)\n"
    )
    facts = note_facts(text, "docs/adr/021-Multi-cluster.md")
    assert facts.status == "superseded"
    assert [(r.number, r.target) for r in facts.superseded_by] == [(36, "036-multi-cluster.md")]


@pytest.mark.parametrize(
    ("line", "relation", "numbers"),
    [
        ("Status: Superseded by ADR-7", "superseded_by", [7]),
        ("**Status**: Accepted. Supersedes 0003.", "supersedes", [3]),
        ("Status: Accepted, amended by 12 and 14", "amended_by", [12, 14]),
        ("This decision amends ADR 0009.", "amends", [9]),
        ("Superseded by [ADR-7](0007-use-kafka.md)", "superseded_by", [7]),
    ],
)
def test_relation_phrases(line: str, relation: str, numbers: list[int]) -> None:
    facts = note_facts(f"# Title\n\n{line}\n")
    assert [r.number for r in getattr(facts, relation)] == numbers


def test_partial_supersession_outside_the_status() -> None:
    text = (
        "# Simplify\n\nNote: this ADR supersedes some aspects of [ADR-15](adr-015-x.md) "
        "and [ADR-16](adr-016-y.md).\n\n## Status\n\nPROPOSED\n"
    )
    facts = note_facts(text, "adr-017-simplify.md")
    assert facts.status == "proposed" and facts.number == 17
    assert [(r.number, r.target, r.partial) for r in facts.supersedes] == [
        (15, "adr-015-x.md", True),
        (16, "adr-016-y.md", True),
    ]


def test_a_phrase_without_a_reference_is_no_fact() -> None:
    text = (
        '# 0. Record decisions\n\nA decision may be marked as "deprecated" or "superseded" '
        "with a reference to its replacement.\n\nSee ADR 12 for names.\n\n"
        "```\nSuperseded by 4\n```\n"
    )
    facts = note_facts(text, "000-record.md")
    assert facts == NoteFacts(number=0)


def test_dated_update_paragraph_records_a_change() -> None:
    text = "# Caching\n\nWe cache for 5 minutes.\n\nUpdate (2022-01-10): we cache for 1 minute.\n"
    facts = note_facts(text)
    assert facts.records_change and facts.change_lines == (4,)
    units = parse(text)
    before, after = [(u.start_line, u.section) for u in units]
    assert comparable(before, after, facts)
    assert not comparable(before, before, facts)
    assert not comparable(before, after, NoteFacts())


def test_units_of_a_note_without_a_change_are_never_comparable() -> None:
    facts = note_facts(ADR)
    units = [(u.start_line, u.section) for u in parse(ADR) if u.claim]
    assert not comparable(units[0], units[1], facts)


def test_resolve_ref_by_link_then_by_number() -> None:
    paths = [
        "docs/adr/019-Shared-Ingress-Controllers.md",
        "docs/adr/036-multi-cluster.md",
        "docs/adr/0007-use-kafka.md",
        "other/7-notes.md",
        "docs/adr/021-Multi-cluster.md",
    ]
    src = "docs/adr/021-Multi-cluster.md"
    assert (
        resolve_ref(Ref(relation="superseded_by", target="036-multi-cluster.md"), src, paths)
        == "docs/adr/036-multi-cluster.md"
    )
    assert (
        resolve_ref(Ref(relation="see", target="./019-Shared-Ingress-Controllers.md#x"), src, paths)
        == "docs/adr/019-Shared-Ingress-Controllers.md"
    )
    assert resolve_ref(Ref(relation="amends", number=7), src, paths) == "docs/adr/0007-use-kafka.md"
    assert resolve_ref(Ref(relation="amends", number=21), src, paths) is None  # itself
    assert resolve_ref(Ref(relation="amends", number=99), src, paths) is None
    assert resolve_ref(Ref(relation="amends", target="https://x.org/7"), src, paths) is None


@pytest.mark.parametrize(
    ("path", "number"),
    [
        ("docs/adr/0007-use-kafka.md", 7),
        ("adr-015-data-abstraction-model.md", 15),
        ("018-Dedicated-Ingress-Controllers.md", 18),
        ("AGENTS.md", None),
        ("docs/adr/README.md", None),
    ],
)
def test_note_number(path: str, number: int | None) -> None:
    assert note_number(path) == number
