"""memls.scope.project_key: the one normalisation of a project name."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from memls.errors import InvalidInput
from property_helpers import expected_key


@settings(max_examples=200, deadline=None)
@given(raw=st.text(min_size=1, max_size=20))
def test_project_key_is_idempotent(raw) -> None:
    from memls.scope import project_key

    try:
        key = project_key(raw)
    except InvalidInput as exc:
        assert exc.field == "project"
        assert not expected_key(raw) or "\x00" in raw
        return
    assert key == expected_key(raw)
    assert project_key(key) == key
    assert project_key(unicodedata.normalize("NFD", raw)) == key
    assert project_key(" " + raw + "\t") == key
