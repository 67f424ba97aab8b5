"""memls.conflicts.frames and the scorer rules built on it: change-of-state frames,
preference order, named-thing swaps, and the false alarms of real notes they must not raise."""

from __future__ import annotations

import pytest

from memls.conflicts import frames
from memls.conflicts.scorer import score_pair
from memls.conflicts.text import stem


def kinds(text: str) -> list[tuple[str, set[str], set[str]]]:
    return [(c.kind, set(c.old), set(c.new)) for c in frames.changes(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "We moved the job queue from RabbitMQ to Amazon SQS.",
            ("replace", {"rabbitmq"}, {"amazon", "sqs"}),
        ),
        (
            "Deploys now go through Argo CD instead of the Jenkins pipeline.",
            ("replace", {"jenkin", "pipelin"}, {"argo", "cd"}),
        ),
        ("Okta has replaced Auth0 as our identity provider.", ("replace", {"auth0"}, {"okta"})),
        (
            "The orders-api service has been renamed to commerce-api.",
            ("rename", {"orders-api", "servic"}, {"commerce-api"}),
        ),
        ("The CLI was rewritten in Go.", ("rewrite", set(), {"go"})),
        ("We no longer publish nightly builds.", ("remove", {"publish", "night", "build"}, set())),
        ("We are dropping support for IE11.", ("remove", {"ie11"}, set())),
        (
            "We will remove all concept of supertypes, subtypes and attribute inheritance.",
            ("remove", {"supertyp"}, set()),
        ),
        (
            "Move from EKS managed nodes to EKS Fargate.",
            ("replace", {"eks", "manag", "nod"}, {"eks", "fargat"}),
        ),
    ],
)
def test_change_frames(text: str, expected: tuple[str, set[str], set[str]]) -> None:
    assert expected in kinds(text)


@pytest.mark.parametrize(
    "text",
    [
        "With SSO we don't have to create and remove IAM Users.",  # an activity, not a change
        "Should we move the job queue to SQS?",  # a question changes nothing
        "Includes a move to the new AWS account.",  # "move" as a noun
    ],
)
def test_no_frame(text: str) -> None:
    assert frames.changes(text) == ()


def test_preferences_keep_their_order() -> None:
    ((a, b, _),) = frames.preferences("Prefer squash merges over merge commits.")
    assert (a, b) == ({"squash"}, {"commit"})
    ((a, b, _),) = frames.preferences("Composition is preferred to inheritance.")
    assert (a, b) == ({stem("composition")}, {"inheritanc"})


def test_entities_are_names_identifiers_and_code_not_link_targets() -> None:
    text = (
        "We use GitHub Actions and `pytest -q` on node.js 20; see "
        "[the docs](https://docs.example.org/Guide) and #deploys."
    )
    names = frames.entities(text)
    assert {"github", "action", "pytest", "node.js", "#deploys"} <= names
    assert not any("example" in n or "guide" in n for n in names)


def test_targets_name_what_was_replaced() -> None:
    assert frames.targets("Use Amazon EKS for the main cluster. This replaces usage of kOps.") == {
        "kop"
    }
    assert frames.targets("The cluster runs on EKS.") == frozenset()


# ------------------------------------------------------------------ the scorer on them

CONTRADICTIONS = [
    ("Session storage was migrated from Memcached to Redis.", "User sessions live in Memcached."),
    (
        "We rewrote the ingestion worker in Rust for throughput.",
        "The ingestion worker is a Node.js service.",
    ),
    (
        "The Slack channel #deploys was renamed to #releases.",
        "Deploy announcements go to #deploys.",
    ),
    (
        "GitHub Actions replaces Travis CI for all repositories.",
        "Continuous integration runs on Travis CI.",
    ),
    (
        "Prefer squash merges over merge commits.",
        "We prefer merge commits over squash merges to keep history.",
    ),
    (
        "Availability is prioritised over consistency for the cart service.",
        "For the cart service we prioritise consistency over availability.",
    ),
    (
        "The team will adopt Kafka for event streaming between services.",
        "Services exchange events through RabbitMQ.",
    ),
    (
        "Use Amazon EKS for running the main Kubernetes cluster. This replaces usage of kOps.",
        "We decided to manage the Kubernetes cluster ourselves rather than using EKS.",
    ),
    (
        "We will remove all concept of supertypes, subtypes and attribute inheritance "
        "from the data model.",
        "Entity types may have one or more supertypes.",
    ),
]

COMPATIBLE = [
    # the existing text already states the new state
    (
        "We moved the job queue from RabbitMQ to Amazon SQS.",
        "Background jobs are queued in Amazon SQS.",
    ),
    # the same preference, told twice
    (
        "Prefer small pull requests over large ones.",
        "Small pull requests are preferred to large ones.",
    ),
    # a related remark naming no alternative
    (
        "Kafka topics are created through the self-service portal.",
        "The team will adopt Kafka for event streaming between services.",
    ),
    # another scope: the change applies to the admin app only
    (
        "We replaced Webpack with Vite for the admin app.",
        "The customer app is still bundled with Webpack.",
    ),
    # a named swap with different modifiers of the shared word: two subjects
    ("Python services are linted with Ruff.", "TypeScript services are linted with ESLint."),
    # an option weighed, not a choice made
    (
        "Alternatively, we could have used DynamoDB for the primary datastore.",
        "We will use PostgreSQL as the primary datastore.",
    ),
    # "v1 deprecated" says nothing of "v2"
    ("The v1 API was deprecated last year.", "The v2 API is the only supported version."),
    # links are references, not slot fillers
    (
        "See [the runbook](https://docs.google.com/document/d/abc/edit) for the steps.",
        "See [the runbook](https://docs.google.com/document/d/xyz/edit) for the steps.",
    ),
    # paragraphs: a slot filled by common words is no choice
    (
        "Arachne achieves this by defining the whole running system as one set of components "
        "that are started and stopped together, with modules that interact only by referencing "
        "each other through the shared configuration value.",
        "Modules interact by referencing components, and each module contributes a set of data "
        "that Arachne reads at startup and turns into the runtime system of the application.",
    ),
]


@pytest.mark.parametrize(("new", "existing"), CONTRADICTIONS)
def test_contradictions(new: str, existing: str) -> None:
    verdict = score_pair(new, existing)
    assert verdict.contradiction, verdict


@pytest.mark.parametrize(("new", "existing"), COMPATIBLE)
def test_compatible(new: str, existing: str) -> None:
    verdict = score_pair(new, existing)
    assert not verdict.contradiction, verdict


def test_wire_shape_is_unchanged() -> None:
    verdict = score_pair(*CONTRADICTIONS[0])
    assert {s.kind for s in verdict.signals} <= {
        "negation",
        "antonym",
        "value_change",
        "choice_change",
        "temporal_override",
    }
    assert set(type(verdict).__struct_fields__) == {
        "contradiction",
        "confidence",
        "signals",
        "similarity",
        "similarity_source",
        "update_marker",
    }


def test_targets_leave_out_what_any_frame_of_the_text_adopts():
    # "we replaced [Jenkins with GitHub Actions]" is also read as one removal frame
    text = "We replaced Jenkins with GitHub Actions for the web app pipeline"
    assert frames.targets(text) == {"jenkin"}


def test_a_replaced_name_said_again_in_the_new_text_is_context_not_the_filler():
    managed = (
        "Use [Amazon Managed Service for Prometheus](https://aws.amazon.com/prometheus/) for "
        "monitoring, instead of a self-managed instance of Prometheus."
    )
    node_group = "**Chosen:** r5.2xlarge, r4.2xlarge - for the Prometheus node group"
    assert not score_pair(managed, node_group, similarity=0.65).contradiction
    replaced = "Use Grafana Mimir for monitoring, instead of Prometheus."
    assert score_pair(replaced, "Prometheus stores our metrics.", similarity=0.65).contradiction
