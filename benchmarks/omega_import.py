"""How long `memls import --from omega` takes on a big OMEGA store, every check on.

OMEGA 1.5.20 itself (its venv: tests/imports/setup_omega.sh) stores COUNT distinct memories of
one project (the latency corpus's generated project memories and chat lines, `corpus.py`; each
tenth superseding the one before it, each 50th flagged), with a pseudo-embedding: OMEGA's own
model is not what is measured. Then memls, on a fresh data directory with its default settings
(vectors, the pair model), imports the store as a user would and the wall time is taken until
the command returns: read, secrets, tombstones, duplicates, the writes in one transaction, the
embedding and indexing of every memory, the near-duplicate merge and the contradiction check.

    python benchmarks/omega_import.py --count 10000 --out benchmarks/results/omega-import-10k.txt

`--corpus chat`: only the corpus's chat lines (people's remarks rather than project facts; they
hold contradictions too). The OMEGA store is kept under
~/.cache/memls-omega/bench-COUNT[-chat] (made once).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "imports"))

from corpus import distractors


def texts_of(corpus: str, count: int) -> list[str]:
    """`count` distinct texts of the latency corpus: its mix of generated project facts and
    chat lines, or only its chat lines (`chat`: far fewer statements that contradict)."""
    sample = {"sample_id": "omega", "conversation": {"speaker_a": "Ann", "speaker_b": "Bo"}}
    if corpus == "mixed":
        return [item.text for item in distractors(sample, count)]
    chat = [i.text for i in distractors(sample, count * 3) if i.text.startswith("[")]
    return chat[:count]


def omega_store(count: int, corpus: str) -> tuple[Path, Path]:
    """(OMEGA's home, the project folder) of a store of `count` memories, made once."""
    cache = Path(os.environ.get("MEMLS_OMEGA_CACHE", Path.home() / ".cache" / "memls-omega"))
    name = f"bench-{count}" + ("" if corpus == "mixed" else f"-{corpus}")
    home, project = cache / name / "home", cache / name / "project"
    if (home / "omega.db").is_file():
        return home, project
    from conftest import omega_env  # tests/imports: OMEGA's offline environment

    python = subprocess.run(
        ["bash", str(ROOT / "tests" / "imports" / "setup_omega.sh")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[-1]
    home.mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)
    texts = texts_of(corpus, count)
    assert len(texts) == count == len(set(texts))
    listing = home.parent / "texts.json"
    listing.write_text(json.dumps(texts))
    subprocess.run(
        [python, str(ROOT / "tests" / "imports" / "omega_store.py"), "bulk", str(home)]
        + [str(project), str(listing)],
        cwd=project,
        env=omega_env(home),
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return home, project


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--corpus", choices=("mixed", "chat"), default="mixed")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    home, project = omega_store(args.count, args.corpus)
    memls = str(Path(sys.executable).with_name("memls"))
    lines = [
        "# python benchmarks/omega_import.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        f"# cpus {os.cpu_count()}, load average at start: "
        + " ".join(f"{x:.2f}" for x in os.getloadavg()),
    ]
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "MEMLS_DATA_DIR": data}
        command = [memls, "import", "--from", "omega", str(home), "-p", str(project), "--json"]
        started = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        took = time.monotonic() - started
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        result = json.loads(done.stdout)
        counts = result["projects"][0]
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        rss, cpu = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    lines += [
        "# load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "",
        "| OMEGA memories | stored | superseded | flagged | merged | contradictions "
        "| wall s | CPU s | memories/s | peak RSS MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {counts['read']} | {counts['stored']} | {counts['superseded']} | "
        f"{counts['flagged']} | {counts['merged']} | {counts['conflicts']} | {took:.1f} | "
        f"{cpu:.0f} | "
        f"{counts['read'] / took:.1f} | {rss:.0f} |",
        "",
        "indexed: " + str(result["indexed"]).lower(),
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
