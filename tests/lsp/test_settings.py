"""The client's settings: one typed Struct; a bad value is refused by name, never swallowed.
Which files are notes is not among them: the owner's table of the agents' conventions says it,
so an editor's old `notes` section is left alone like any key only the extension reads."""

from __future__ import annotations

import pytest

from memls.errors import InvalidInput
from memls.lsp import settings


@pytest.mark.parametrize(
    "raw, token",
    [
        pytest.param(None, None, id="nothing sent"),
        pytest.param({}, None, id="empty"),
        pytest.param({"token": "t"}, "t", id="token"),
        pytest.param({"notes": {"globs": ["NOTES.md"]}}, None, id="an old notes section"),
        pytest.param(
            {"server": {"command": "memls"}, "rerank": False},
            None,
            id="keys only the extension reads are left alone",
        ),
    ],
)
def test_good_settings(raw, token):
    read = settings.read(raw, "memls")
    assert read.token == token
    assert not hasattr(read, "notes")


@pytest.mark.parametrize(
    "raw, field",
    [
        pytest.param({"token": 7}, "memls.token", id="token not a string"),
        pytest.param([1], "memls", id="not an object"),
    ],
)
def test_bad_settings_are_refused_naming_the_key(raw, field):
    with pytest.raises(InvalidInput) as info:
        settings.read(raw, "memls")
    assert info.value.field == field
