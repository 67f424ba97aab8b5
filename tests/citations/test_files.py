"""Reading cited files inside the project folder; git's rename detection."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memls.citations import git
from memls.citations.files import MAX_TEXT_BYTES, line_count, read, relative
from memls.errors import InvalidInput


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (tmp_path / "outside.py").write_text("secret = 1\n")
    return root


@pytest.mark.parametrize(
    "raw, words",
    [
        ("/etc/passwd", "absolute"),
        ("../outside.py", "leaves"),
        ("src/../../outside.py", "leaves"),
        ("src/nope.py", "does not exist"),
        ("src", "not a file"),
        ("", "non-empty"),
    ],
)
def test_paths_outside_or_absent_are_refused_naming_the_field(
    project: Path, raw: str, words: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        relative(project, raw, field="citations[0].path")
    assert caught.value.field == "citations[0].path"
    assert words in caught.value.message


def test_a_symlink_out_of_the_folder_is_refused(project: Path) -> None:
    os.symlink(project.parent / "outside.py", project / "link.py")
    with pytest.raises(InvalidInput, match="leads out"):
        relative(project, "link.py", field="path")


def test_relative_paths_are_normalised(project: Path) -> None:
    assert relative(project, "./src//a.py", field="path") == "src/a.py"


def test_binary_and_big_files_keep_a_file_fingerprint(project: Path) -> None:
    (project / "b.bin").write_bytes(b"\x00\x01\x02")
    (project / "big.txt").write_bytes(b"x\n" * (MAX_TEXT_BYTES // 2 + 1))
    for name in ("b.bin", "big.txt"):
        found = read(project, name)
        assert found is not None and found.coarse and found.digest
    text = read(project, "src/a.py")
    assert text is not None and text.view is not None and text.view.norm == ["x=1"]
    assert read(project, "gone.py") is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_names_a_rename_in_the_working_tree(project: Path) -> None:
    def run(*args: str) -> None:
        subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True)

    run("init", "-q")
    (project / "src" / "a.py").write_text("".join(f"line_{i} = {i}\n" for i in range(40)))
    run("add", ".")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    base = git.head(project)
    assert base is not None
    run("mv", "src/a.py", "src/b.py")
    assert git.renames(project, base) == {"src/a.py": "src/b.py"}
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "two")
    assert git.renames(project, base) == {"src/a.py": "src/b.py"}
    assert git.renames(project.parent / "nowhere") == {}


def test_a_cited_file_swapped_for_a_link_out_is_not_read(project: Path) -> None:
    outside = project.parent / "outside.py"
    outside.write_text("SECRET = 1\n")
    assert read(project, "src/a.py") is not None
    os.remove(project / "src" / "a.py")
    os.symlink(outside, project / "src" / "a.py")
    assert read(project, "src/a.py") is None
    assert line_count(project, "src/a.py") == 0
    os.remove(project / "src" / "a.py")
    os.symlink(project.parent, project / "src" / "up")
    assert read(project, "src/up/outside.py") is None


def test_a_fifo_named_like_a_cited_file_does_not_hang_the_reader(project: Path) -> None:
    os.mkfifo(project / "pipe.py")
    assert read(project, "pipe.py") is None
    assert line_count(project, "pipe.py") == 0
