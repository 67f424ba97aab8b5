"""The client's settings: one typed Struct; a bad value is refused by name, never swallowed."""

from __future__ import annotations

import pytest

from memls.errors import InvalidInput
from memls.lsp import settings
from memls.notes.globs import DEFAULT_GLOBS


@pytest.mark.parametrize(
    "raw, globs",
    [
        pytest.param(None, list(DEFAULT_GLOBS), id="nothing sent"),
        pytest.param({}, list(DEFAULT_GLOBS), id="empty"),
        pytest.param({"notes": {"globs": ["NOTES.md"]}}, ["NOTES.md"], id="globs"),
        pytest.param({"token": "t", "notes": {}}, list(DEFAULT_GLOBS), id="token, default globs"),
        pytest.param(
            {"server": {"command": "memls"}, "rerank": False},
            list(DEFAULT_GLOBS),
            id="keys only the extension reads are left alone",
        ),
    ],
)
def test_good_settings(raw, globs):
    assert settings.read(raw, "memls").notes.globs == globs


@pytest.mark.parametrize(
    "raw, field",
    [
        pytest.param({"notes": {"globs": "AGENTS.md"}}, "memls.notes.globs", id="globs not a list"),
        pytest.param({"notes": {"globs": [1, 2]}}, "memls.notes.globs", id="globs not strings"),
        pytest.param({"notes": 3}, "memls.notes", id="notes not a table"),
        pytest.param({"token": 7}, "memls.token", id="token not a string"),
        pytest.param([1], "memls", id="not an object"),
    ],
)
def test_bad_settings_are_refused_naming_the_key(raw, field):
    with pytest.raises(InvalidInput) as info:
        settings.read(raw, "memls")
    assert info.value.field == field
