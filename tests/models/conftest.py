"""The real ONNX models, one runtime shared by the tests of tests/models/ (no mocks)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memls.models import ModelRuntime


# Package scope: loaded once for this folder's files (as the module scope did when they were
# one file) and closed after its last test, not kept for the rest of the session.
@pytest.fixture(scope="package")
def runtime() -> Iterator[ModelRuntime]:
    with ModelRuntime() as rt:
        yield rt
