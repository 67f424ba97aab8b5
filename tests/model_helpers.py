"""A question, its answer and an unrelated passage: the model tests' shared texts."""

from __future__ import annotations

QUERY = "Where did Caroline go on vacation last summer?"
ANSWER = "Caroline spent her summer vacation in Spain, hiking near Granada with her sister."
UNRELATED = "The quarterly report shows that server costs rose by four percent."
