"""The real ONNX models, one runtime per test file of tests/models/ (no mocks)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memls.models import ModelRuntime


# Module scope, as before the split: "package" scope would keep it for the whole session here
# (tests/models/ has no __init__.py), next to the session's own `models` runtime.
@pytest.fixture(scope="module")
def runtime() -> Iterator[ModelRuntime]:
    with ModelRuntime() as rt:
        yield rt
