"""Trust states and how memories move between them (pure rules, no I/O).

    candidate --approve--> verified      any --reject--> rejected
    any --restore--> candidate           candidate|verified --score falls to <= -3--> flagged
    flagged --score recovers above -3--> candidate

Every state can be left: review verbs move between any two different states.
"""

from __future__ import annotations

from memls.errors import Refused

FLAG_AT = -3
SIGNAL_DELTA = {"helpful": 1, "unhelpful": -1, "outdated": -2}
REVIEW_TARGET = {"approve": "verified", "reject": "rejected", "restore": "candidate"}


def review_target(action: str, current: str, memory_id: str) -> str:
    target = REVIEW_TARGET[action]
    if current == target:
        raise Refused(f"memory {memory_id} is already {current}")
    return target


def feedback_transition(trust: str, old_score: int, new_score: int) -> str | None:
    """The trust a memory moves to after feedback, or None when it stays."""
    if trust in ("candidate", "verified") and old_score > FLAG_AT >= new_score:
        return "flagged"
    if trust == "flagged" and new_score > FLAG_AT:
        return "candidate"
    return None
