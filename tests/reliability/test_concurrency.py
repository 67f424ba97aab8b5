"""Three clients at once on one store, mixed operations, no errors.

`make test` runs 3 × MEMLS_CONCURRENT_OPS (default 150); `make soak` 3 × 1,000."""

from __future__ import annotations

import os

from reliability.crash import run_concurrent_clients


def test_three_clients_mixed_operations_without_an_error(tmp_path):
    ops = int(os.environ.get("MEMLS_CONCURRENT_OPS", 150))
    figures = run_concurrent_clients(tmp_path, clients=3, ops=ops)
    print(f"\nconcurrent clients: {figures}")
    assert figures["errors"] == 0, figures["first_errors"]
    assert figures["handles"] == ["LocalEngine", "RemoteEngine", "RemoteEngine"]
