"""The change-frame signal (`memls.conflicts.change_frames`, kind `temporal_override`): the new
text's change-of-state frame aligned with what the old text states, or an update marker that
names what it replaces."""

from __future__ import annotations

import pytest

from memls.conflicts import frames, score_pair
from memls.conflicts.change_frames import change_frame, marker_override
from memls.conflicts.phrasing import entities
from memls.conflicts.text import analyze

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
    # another scope: the change applies to the admin app only
    (
        "We replaced Webpack with Vite for the admin app.",
        "The customer app is still bundled with Webpack.",
    ),
    # "v1 deprecated" says nothing of "v2"
    ("The v1 API was deprecated last year.", "The v2 API is the only supported version."),
]


def fires(new: str, existing: str) -> bool:
    return score_pair(new, existing).contradiction


def test_an_aligned_frame_names_its_marker_and_the_replaced_filler() -> None:
    new = "We switched from Jest to Vitest for unit tests."

    def aligned(existing: str) -> tuple[list[str] | None, bool]:
        names = (entities(new), entities(existing))
        return change_frame(new, existing, analyze(new), analyze(existing), names)

    assert aligned("Unit tests are written with Jest.") == (["switched", "jest"], True)
    assert aligned("Unit tests are written with Vitest.") == (None, False)  # already so


def test_a_marker_is_strong_when_it_names_what_the_old_text_states() -> None:
    def marked(new: str, existing: str, strong_evidence: bool = False):
        return marker_override(analyze(new), analyze(existing), strong_evidence=strong_evidence)

    assert marked(
        "We no longer use Celery; background jobs run on Dramatiq.",
        "Background jobs run on Celery.",
    ) == (["no longer", "celery"], True)
    weak = marked("Deploys now run through Argo CD.", "Deploys run through Argo CD on every merge.")
    assert weak == (["now"], False)
    unrelated = "The office coffee machine is broken."
    assert marked("Deploys now run through Argo CD.", unrelated) is None
    assert marked("Deploys now run through Argo CD.", unrelated, strong_evidence=True) == (
        ["now"],
        False,
    )
    assert marked("Deploys run through Argo CD.", unrelated, strong_evidence=True) is None


@pytest.mark.parametrize(("new", "existing"), CONTRADICTIONS)
def test_contradictions(new: str, existing: str) -> None:
    verdict = score_pair(new, existing)
    assert verdict.contradiction, verdict


@pytest.mark.parametrize(("new", "existing"), COMPATIBLE)
def test_compatible(new: str, existing: str) -> None:
    verdict = score_pair(new, existing)
    assert not verdict.contradiction, verdict


def test_a_replaced_name_said_again_in_the_new_text_is_context_not_the_filler():
    managed = (
        "Use [Amazon Managed Service for Prometheus](https://aws.amazon.com/prometheus/) for "
        "monitoring, instead of a self-managed instance of Prometheus."
    )
    node_group = "**Chosen:** r5.2xlarge, r4.2xlarge - for the Prometheus node group"
    assert not score_pair(managed, node_group, similarity=0.65).contradiction
    replaced = "Use Grafana Mimir for monitoring, instead of Prometheus."
    assert score_pair(replaced, "Prometheus stores our metrics.", similarity=0.65).contradiction


def test_update_marker_is_reported_for_the_new_text_only():
    assert score_pair("Bob now owns billing.", "Alice owns billing.").update_marker
    assert not score_pair("Alice owns billing.", "Bob now owns billing.").update_marker


def test_a_marker_alone_is_corroboration_not_a_verdict():
    verdict = score_pair(
        "Deploys now run through Argo CD.", "Deploys run through Argo CD on every merge to main."
    )
    assert verdict.update_marker
    assert not verdict.contradiction
    assert all(s.weight < 0.5 for s in verdict.signals)


def test_rewritten_from_a_names_what_was_replaced() -> None:
    assert fires(
        "The billing worker is a Go binary now, rewritten from the old Ruby code.",
        "The billing worker is written in Ruby.",
    )
    assert not fires(
        "The billing worker is a Go binary now, rewritten from the old Ruby code.",
        "The billing worker is written in Go.",
    )


def test_instead_of_reads_the_word_next_to_it_as_the_new_filler() -> None:
    assert fires(
        "Rust services log with tracing instead of log4rs.",
        "Rust services log through log4rs with a JSON appender.",
    )
    assert not fires(
        "Rust services log with tracing instead of log4rs.",
        "Rust services log with tracing and a JSON layer.",
    )


def test_a_trailing_scope_matches_a_compound_of_the_other_text() -> None:
    assert fires(
        "Playwright instead of Cypress for all browser tests in the web packages.",
        "Web packages are browser-tested with Cypress.",
    )
    assert not fires(
        "Playwright instead of Cypress for the admin app.",
        "The customer app runs its browser tests with Cypress.",
    )


def test_imperative_removal_and_dropping_support() -> None:
    assert fires(
        "Drop the Memcached layer entirely; Postgres is fast enough.",
        "Search results are cached in Memcached for a minute.",
    )
    assert fires("We are dropping support for Safari 14.", "The web app supports Safari 14.")
    assert not fires("We are dropping support for Safari 14.", "The web app supports Safari 16.")


def test_a_thing_no_longer_used_is_removed() -> None:
    (change,) = frames.changes("Vagrant is no longer used for local development.")
    assert change.kind == "remove" and "vagrant" in change.old
    assert fires(
        "Vagrant is no longer used for local development.",
        "Start the local stack with `Vagrant up`.",
    )
    assert not fires(
        "Vagrant is no longer used for local development.",
        "Local development uses Docker Compose.",
    )


def test_off_a_onto_b_and_got_rid_of() -> None:
    assert fires(
        "we moved the tracing pipeline off Zipkin and onto Tempo",
        "Services send spans to Zipkin through the local agent.",
    )
    assert fires(
        "we got rid of the shared QA cluster",
        "Testers deploy to the shared QA cluster on qa.internal.",
    )
    assert not fires(
        "we got rid of the shared QA cluster",
        "Each team runs its own preview environments.",
    )


def test_supersede_without_s() -> None:
    assert fires(
        "Grafana alerts supersede the old Zabbix triggers.",
        "Disk usage is watched by Zabbix triggers that page the on-call engineer.",
    )


def test_an_option_weighed_states_no_change() -> None:
    new = "Option 3: replace Celery with Dramatiq. Pros: simpler. Cons: fewer integrations."
    assert not fires(new, "Background jobs run on Celery.")
    assert fires("We replaced Celery with Dramatiq.", "Background jobs run on Celery.")


def test_left_now_out_of_into_replaces_and_supersedes() -> None:
    assert fires(
        "Docs are hosted on GitHub Pages since we left Read the Docs.",
        "Docs are built on Read the Docs.",
    )
    assert fires("Search now runs on Meilisearch.", "Search is powered by Elasticsearch.")
    assert fires(
        "Moved feature flags out of the database into Unleash.",
        "Feature flags live in the database.",
    )
    assert fires(
        "Use AKS for all clusters; this replaces the self-managed control plane.",
        "We run our own Kubernetes control plane on three dedicated VMs.",
    )
    assert fires(
        "This ADR supersedes ADR-0007: image thumbnails are generated on upload.",
        "ADR-0007: thumbnails are generated lazily on first request and then cached.",
    )


@pytest.mark.parametrize(
    ("new", "existing"),
    [
        pytest.param(
            "We will decommission our management cluster once the move is complete.",
            "There will be an increased complexity of cluster management.",
            id="the replaced thing hangs on another noun by 'of'",
        ),
        pytest.param(
            "We will decommission our Concourse pipelines once the move is complete.",
            "The team has time to design an alternative based on Concourse CI.",
            id="named only in what the statement is based on",
        ),
        pytest.param(
            "This implements the Network Policy API. It is recommended by EKS.",
            "We decided to manage the kubernetes cluster ourselves rather than using EKS "
            "mainly for the below reasons:",
            id="the rejected thing named only as an agent",
        ),
    ],
)
def test_a_change_aligns_only_with_what_the_other_text_states(new: str, existing: str) -> None:
    """A change frame fires when what changed is the other statement's subject or choice,
    not a word it merely shares."""
    assert not any(s.kind == "temporal_override" for s in score_pair(new, existing).signals)


@pytest.mark.parametrize(
    ("new", "existing"),
    [
        pytest.param(
            "We will decommission our Concourse pipelines.",
            "Replace self hosted Jenkins with self hosted Concourse CI pipeline.",
            id="the choice of a replacement",
        ),
        pytest.param(
            "Session storage was migrated from Memcached to Redis.",
            "User sessions live in Memcached.",
            id="where a thing lives is its choice",
        ),
        pytest.param(
            "We use Amazon EKS for running the main cluster.",
            "We decided to manage the kubernetes cluster ourselves rather than using EKS "
            "mainly for the below reasons:",
            id="the rejected thing now chosen",
        ),
        pytest.param(
            "Soft deletes are gone: deleting a record removes the row.",
            "Deleting a customer sets deleted_at instead of removing the row.",
            id="'instead of' is no noun to hang on",
        ),
    ],
)
def test_a_change_still_aligns_with_a_subject_or_choice(new: str, existing: str) -> None:
    assert any(s.kind == "temporal_override" for s in score_pair(new, existing).signals)


def test_a_change_to_what_the_other_text_forbids_aligns() -> None:
    """The new state of the change is what the other text forbids: the change reverses it,
    though the other text names the new state (under its prohibition)."""
    new = (
        "Docstrings switched from single backticks to Sphinx-style double backticks for "
        "inline code references."
    )
    old = (
        "Do NOT use Sphinx-style double backtick formatting. Use single backticks for inline "
        "code references in docstrings and comments."
    )
    names = (entities(new), entities(old))
    triggers, _ = change_frame(new, old, analyze(new), analyze(old), names)
    assert triggers == ["switched", "single", "backticks"]
    allowed = "Use single backticks for inline code references in docstrings and comments."
    names = (entities(new), entities(allowed))
    assert change_frame(new, allowed, analyze(new), analyze(allowed), names)[0] is not None
    assert score_pair(new, old, similarity=0.9).contradiction
