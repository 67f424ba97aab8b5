"""memory/promote on a real engine: a note that cannot be read or written is refused by the
field that names it (`to`), and nothing is changed."""

from __future__ import annotations

import pytest

from memls import protocol as p
from memls.errors import MemlsError


@pytest.fixture
def project(tmp_path):
    folder = tmp_path / "proj"
    folder.mkdir()
    return folder


def _stored(engine, project):
    return engine.store(p.StoreParams(text="Deploys go through Jenkins", project=str(project)))


@pytest.mark.parametrize(
    ("to", "prepare"),
    [
        pytest.param("dir.md", lambda f: (f / "dir.md").mkdir(), id="a folder named .md"),
        pytest.param(
            "bad.md", lambda f: (f / "bad.md").write_bytes(b"\xff\xfe not utf-8\n"), id="not utf-8"
        ),
        pytest.param("file/x.md", lambda f: (f / "file").write_text("x"), id="under a file"),
        pytest.param("x" * 300 + ".md", lambda f: None, id="a name too long"),
    ],
)
def test_a_note_that_cannot_be_read_or_written_is_refused_by_to(engine, project, to, prepare):
    prepare(project)
    stored = _stored(engine, project)
    files = sorted(project.rglob("*"))
    with pytest.raises(MemlsError) as refused:
        engine.promote(p.PromoteParams(id=stored.id, project=str(project), to=to))
    assert refused.value.field == "to"
    memory = engine.get(p.GetParams(id=stored.id, project=str(project)))
    assert memory.source_uri is None
    assert sorted(project.rglob("*")) == files
