"""The review queue's state machine (candidate, verified, flagged, rejected): feedback and the
review verbs against a model of score and trust, with every transition audited."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from memls import lifecycle, protocol
from memls.errors import Refused
from property_helpers import (
    DELTA,
    REVIEW_TARGET,
    TRUST_STATES,
    VISIBLE,
    Fresh,
    model_feedback_trust,
)


def test_model_constants_match_lifecycle() -> None:
    # The models in property_helpers restate lifecycle.py; keep them honest.
    assert DELTA == lifecycle.SIGNAL_DELTA
    assert REVIEW_TARGET == lifecycle.REVIEW_TARGET
    assert lifecycle.FLAG_AT == -3


REVIEW_PROJECT = "review"
REVIEW_WORD = "invariant"


class ReviewMachine(RuleBasedStateMachine):
    """Feedback and review verbs over a few memories, against a model of score and trust."""

    # Across every run (for the coverage check after the stateful test).
    visited_all: set[str] = set()
    left_all: set[str] = set()

    def __init__(self) -> None:
        super().__init__()
        self.fx = Fresh(front="machine")
        self.eng = self.fx.engine
        self.ids: list[str] = []
        self.trust: dict[str, str] = {}
        self.score: dict[str, int] = {}
        self.audit_ops: dict[str, list[tuple]] = {}
        self.visited: set[str] = set()
        self.left: set[str] = set()

    @initialize(count=st.integers(min_value=1, max_value=3))
    def create(self, count: int) -> None:
        for i in range(count):
            res = self.eng.store(
                protocol.StoreParams(
                    text=f"{REVIEW_WORD} memory number {i}", project=REVIEW_PROJECT
                )
            )
            self.ids.append(res.id)
            self.trust[res.id] = "candidate"
            self.score[res.id] = 0
            self.audit_ops[res.id] = [("store",)]
        self.visited.add("candidate")
        ReviewMachine.visited_all.add("candidate")

    def _moved(self, mid: str, old: str, new: str, cause: str, transition) -> None:
        assert transition is not None
        assert (
            transition.memory_id,
            transition.from_trust,
            transition.to_trust,
            transition.cause,
        ) == (mid, old, new, cause)
        self.trust[mid] = new
        self.audit_ops[mid].append(("trust", old, new, cause))
        for s in (self.visited, ReviewMachine.visited_all):
            s.add(new)
        for s in (self.left, ReviewMachine.left_all):
            s.add(old)

    def _pick(self, index: int) -> str:
        return self.ids[index % len(self.ids)]

    @rule(index=st.integers(min_value=0, max_value=2), signal=st.sampled_from(list(DELTA)))
    def feedback(self, index: int, signal: str) -> None:
        mid = self._pick(index)
        res = self.eng.feedback(
            protocol.FeedbackParams(
                id=mid, signal=signal, project=REVIEW_PROJECT, query=REVIEW_WORD
            )
        )
        old_trust, old = self.trust[mid], self.score[mid]
        new = old + DELTA[signal]
        self.score[mid] = new
        self.audit_ops[mid].append(("feedback", signal, new))
        target = model_feedback_trust(old_trust, old, new)
        assert res.score == new
        assert res.trust == target
        if target != old_trust:
            self._moved(mid, old_trust, target, "feedback", res.transition)
        else:
            assert res.transition is None

    def _review(self, index: int, action: str) -> None:
        mid = self._pick(index)
        old = self.trust[mid]
        params = protocol.ReviewParams(
            action=action, id=mid, project=REVIEW_PROJECT, note=f"{action} by the machine"
        )
        if old == REVIEW_TARGET[action]:
            with pytest.raises(Refused):
                self.eng.review(params)
            return
        res = self.eng.review(params)
        assert res.memories[0].trust == REVIEW_TARGET[action]
        assert res.transition.note == f"{action} by the machine"
        self._moved(mid, old, REVIEW_TARGET[action], action, res.transition)
        if action == "approve" and old == "flagged":
            # A flagged memory, once approved, is found by query again.
            hits = self.eng.query(
                protocol.QueryParams(query=REVIEW_WORD, project=REVIEW_PROJECT, k=1000)
            ).results
            assert mid in {h.id for h in hits}

    @rule(index=st.integers(min_value=0, max_value=2))
    def approve(self, index: int) -> None:
        self._review(index, "approve")

    @rule(index=st.integers(min_value=0, max_value=2))
    def reject(self, index: int) -> None:
        self._review(index, "reject")

    @rule(index=st.integers(min_value=0, max_value=2))
    def restore(self, index: int) -> None:
        self._review(index, "restore")

    @precondition(lambda self: bool(self.ids))
    @invariant()
    def matches_model(self) -> None:
        hits = self.eng.query(
            protocol.QueryParams(query=REVIEW_WORD, project=REVIEW_PROJECT, k=1000)
        ).results
        found = {h.id for h in hits}
        for mid in self.ids:
            got = self.eng.get(protocol.GetParams(id=mid, project=REVIEW_PROJECT))
            assert (got.trust, got.feedback_score) == (self.trust[mid], self.score[mid]), mid
            assert (mid in found) == (self.trust[mid] in VISIBLE), (mid, self.trust[mid])
        # review list == trust, per state
        for state in TRUST_STATES:
            rv = self.eng.review(
                protocol.ReviewParams(action="list", project=REVIEW_PROJECT, state=state)
            )
            assert {m.id for m in rv.memories} == {m for m in self.ids if self.trust[m] == state}

    @precondition(lambda self: bool(self.ids))
    @invariant()
    def audit_records_every_transition(self) -> None:
        for mid in self.ids:
            entries = self.eng.audit(
                protocol.AuditParams(project=REVIEW_PROJECT, id=mid, limit=1000)
            ).entries
            seen = []
            for e in reversed(entries):  # oldest first
                if e.op == "store":
                    seen.append(("store",))
                elif e.op == "feedback":
                    seen.append(("feedback", e.detail["signal"], e.detail["score"]))
                elif e.op == "trust":
                    seen.append(
                        ("trust", e.detail["fromTrust"], e.detail["toTrust"], e.detail["cause"])
                    )
                elif e.op == "conflict_detected":
                    assert e.detail["older"] in self.ids  # background check, same project
                    continue
                else:
                    seen.append((e.op,))
                assert e.front == "machine"
            assert seen == self.audit_ops[mid], mid
        # and the trust_transitions table (seen through export) agrees
        rows = [
            line["row"]
            for line in self.eng.export(REVIEW_PROJECT)
            if line.get("table") == "trust_transitions"
        ]
        want = [
            (mid, *op[1:]) for mid in self.ids for op in self.audit_ops[mid] if op[0] == "trust"
        ]
        got = [(r["memory_id"], r["from_trust"], r["to_trust"], r["cause"]) for r in rows]
        assert sorted(got) == sorted(want)

    def teardown(self) -> None:
        self.fx.close()


REVIEW_SETTINGS = settings(
    max_examples=40,
    stateful_step_count=25,
    deadline=None,
    derandomize=True,  # the same 40 runs each time: "every state left" cannot fail by chance
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def test_review_state_machine() -> None:
    ReviewMachine.visited_all = set()
    ReviewMachine.left_all = set()
    run_state_machine_as_test(ReviewMachine, settings=REVIEW_SETTINGS)
    # Over the whole run every state was reached and left (40 runs of 25 steps).
    assert ReviewMachine.visited_all == set(TRUST_STATES)
    assert ReviewMachine.left_all == set(TRUST_STATES)


def _step(machine: ReviewMachine, name: str, *args) -> None:
    getattr(machine, name)(*args)
    machine.matches_model()
    machine.audit_records_every_transition()


def test_review_machine_reaches_and_leaves_every_state() -> None:
    """Deterministic walk through every state and out of it, with the same model checks."""
    machine = ReviewMachine()
    try:
        machine.create(1)
        machine.matches_model()
        script = [
            ("approve", 0),  # candidate -> verified
            ("approve", 0),  # refused: already verified
            ("feedback", 0, "unhelpful"),  # -1
            ("feedback", 0, "outdated"),  # -3: verified -> flagged
            ("feedback", 0, "unhelpful"),  # -4: stays flagged
            ("feedback", 0, "helpful"),  # -3: stays flagged
            ("feedback", 0, "helpful"),  # -2: flagged -> candidate
            ("feedback", 0, "outdated"),  # -4: candidate -> flagged
            ("approve", 0),  # flagged -> verified (found by query again)
            ("reject", 0),  # verified -> rejected
            ("reject", 0),  # refused
            ("feedback", 0, "helpful"),  # rejected stays rejected
            ("restore", 0),  # rejected -> candidate
            ("restore", 0),  # refused
            ("reject", 0),  # candidate -> rejected
            ("approve", 0),  # rejected -> verified
            ("feedback", 0, "outdated"),  # -5: verified, old score not above -3: stays
            ("feedback", 0, "helpful"),  # -4
            ("feedback", 0, "helpful"),  # -3
            ("feedback", 0, "helpful"),  # -2
            ("feedback", 0, "outdated"),  # -4: crosses: verified -> flagged
            ("reject", 0),  # flagged -> rejected
            ("restore", 0),  # rejected -> candidate
            ("feedback", 0, "outdated"),  # -6: candidate, not crossing: stays candidate
        ]
        for name, *args in script:
            _step(machine, name, *args)
        assert machine.visited == set(TRUST_STATES)
        assert machine.left == set(TRUST_STATES)
        assert machine.trust[machine.ids[0]] == "candidate"
        assert machine.score[machine.ids[0]] == -6
    finally:
        machine.teardown()
