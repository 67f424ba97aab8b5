"""The house's size rule: every module of the server is one a person can hold in their head."""

from __future__ import annotations

from pathlib import Path

import memls

LIMIT = 450


def test_no_server_module_is_over_the_limit():
    package = Path(memls.__file__).parent
    over = {
        str(path.relative_to(package)): count
        for path in sorted(package.rglob("*.py"))
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > LIMIT
    }
    assert not over, f"modules over {LIMIT} lines (split them by what they do): {over}"
