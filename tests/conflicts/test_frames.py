"""memls.conflicts.frames: change-of-state frames, preference order and what a change replaces
(the scorer's rules on them are tested with their signals: test_change_frames.py,
test_choices.py)."""

from __future__ import annotations

import pytest

from memls.conflicts import frames
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


def test_targets_name_what_was_replaced() -> None:
    assert frames.targets("Use Amazon EKS for the main cluster. This replaces usage of kOps.") == {
        "kop"
    }
    assert frames.targets("The cluster runs on EKS.") == frozenset()


def test_targets_leave_out_what_any_frame_of_the_text_adopts():
    # "we replaced [Jenkins with GitHub Actions]" is also read as one removal frame
    text = "We replaced Jenkins with GitHub Actions for the web app pipeline"
    assert frames.targets(text) == {"jenkin"}
