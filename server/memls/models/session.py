"""ONNX sessions, tokenizers and length-sorted, padded-to-longest batches."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # imported on first load, not with the package (onnxruntime takes ~200 ms)
    import onnxruntime as ort
    from tokenizers import Encoding, Tokenizer

QUIET = 3  # onnxruntime log severity: 0 verbose .. 3 error .. 4 fatal


def _options(intra_op_threads: int) -> ort.SessionOptions:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_op_threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = QUIET
    # No spinning: two sessions (embedder, cross-encoder) share two cores, and one's threads
    # spinning after its run slowed the other's next run: a query's 6-pair re-rank right after
    # its embedding, 92-110 -> 55-57 ms; 28 pairs 231-310 -> 210-297 ms.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def open_session(
    folder: Path, intra_op_threads: int, cache: Path | None = None
) -> ort.InferenceSession:
    """A CPU session for `folder`/model.onnx. With a `cache` folder, the graph optimised once
    (ORT's extended level: the fusions a transformer gets) is kept there and loaded as it is
    next time: 115-156 ms a model instead of 300-500 (the first query after a start waits for
    three). Same outputs; a cache that cannot be written or read is passed by, never fatal."""
    import onnxruntime as ort

    source = folder / "model.onnx"
    if cache is None:
        return _session(source, intra_op_threads, None)
    kept = cache / _cache_name(source, ort.__version__)
    if kept.is_file():
        try:
            return _session(kept, intra_op_threads, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        except Exception:  # noqa: BLE001 - a damaged cached copy: rebuild it from the source
            kept.unlink(missing_ok=True)
    try:
        cache.mkdir(parents=True, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=kept.name, suffix=".tmp", dir=cache)
        os.close(fd)
    except OSError:
        return _session(source, intra_op_threads, None)
    try:
        session = _session(
            source, intra_op_threads, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, Path(tmp)
        )
        os.replace(tmp, kept)  # whole or not at all, whoever writes it first
    except Exception:  # noqa: BLE001 - not cached this time; the model loads as it is
        return _session(source, intra_op_threads, None)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return session


def _session(
    path: Path, intra_op_threads: int, level: Any, optimized: Path | None = None
) -> ort.InferenceSession:
    import onnxruntime as ort

    options = _options(intra_op_threads)
    if level is not None:
        options.graph_optimization_level = level
    if optimized is not None:
        options.optimized_model_filepath = str(optimized)
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def _cache_name(source: Path, runtime: str) -> str:
    """Names the source file (path, size, time) and the runtime that optimised it."""
    stat = source.stat()
    key = f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{runtime}|extended"
    return f"{source.parent.name}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.onnx"


def open_tokenizer(
    folder: Path, max_length: int | None, strategy: str = "longest_first"
) -> Tokenizer:
    """The folder's tokenizer.json without its built-in fixed padding (the packaged reranker's
    pads every input to 512 tokens); we pad each batch to its longest member ourselves.
    `max_length` counts the special tokens; None turns truncation off."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    if max_length is None:
        tokenizer.no_truncation()
    else:
        tokenizer.enable_truncation(max_length, strategy=strategy)
    return tokenizer


def pad_id(tokenizer: Tokenizer) -> int:
    found = tokenizer.token_to_id("[PAD]")
    return 0 if found is None else found


def feeds(
    encodings: Sequence[Encoding], input_names: Sequence[str], pad: int
) -> dict[str, np.ndarray]:
    """int64 arrays [batch, longest] for the inputs the session declares."""
    width = max(len(e.ids) for e in encodings)
    ids = np.full((len(encodings), width), pad, dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    types = np.zeros((len(encodings), width), dtype=np.int64)
    for row, enc in enumerate(encodings):
        n = len(enc.ids)
        ids[row, :n] = enc.ids
        mask[row, :n] = enc.attention_mask
        types[row, :n] = enc.type_ids
    arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    return {name: arrays[name] for name in input_names}


#: The most texts one batch holds however short they are: on these encoders 16 short texts a
#: run cost 5-7% less CPU a text than 4, and 64 cost more again (benchmarks/omega_import.py).
MOST = 16


def batches(
    encodings: Sequence[Encoding],
    batch_size: int,
    input_names: Sequence[str],
    pad: int,
    budget: int | None = None,
) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
    """(caller indices, feeds) per batch; sorted by token length so padding stays minimal.
    A batch holds `batch_size` texts, or with a `budget` (tokens) more of the short ones, up to
    MOST, as long as it holds no more tokens than the budget: `batch_size` texts of the longest
    allowed make the same peak memory."""
    lengths = [len(e.ids) for e in encodings]
    order = np.argsort(lengths, kind="stable")
    start = 0
    while start < len(order):
        end = start + 1
        while end < len(order) and (
            end - start < batch_size
            or (
                budget is not None
                and end - start < MOST
                and (end - start + 1) * lengths[order[end]] <= budget
            )
        ):
            end += 1
        index = order[start:end]
        yield index, feeds([encodings[i] for i in index], input_names, pad)
        start = end


def check_inputs(session: ort.InferenceSession, role: str) -> list[str]:
    """The session's input names, refusing inputs we cannot feed."""
    names = [i.name for i in session.get_inputs()]
    known = {"input_ids", "attention_mask", "token_type_ids"}
    unknown = [n for n in names if n not in known]
    if unknown or "input_ids" not in names:
        expected = "input_ids[, attention_mask, token_type_ids]"
        raise ValueError(f"{role} model inputs {names}: expected {expected}")
    return names


@dataclass(frozen=True)
class Onnx:
    """A session with the tokenizer that feeds it: batches padded to their longest member."""

    session: ort.InferenceSession
    tokenizer: Tokenizer
    input_names: list[str]
    output_name: str
    pad: int

    def run(
        self, encodings: Sequence[Encoding], batch_size: int, budget: int | None = None
    ) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]]:
        """(caller indices, feeds, the first output) per batch (`batches`)."""
        for index, fed in batches(encodings, batch_size, self.input_names, self.pad, budget):
            yield index, fed, self.session.run([self.output_name], fed)[0]

    def probe(self, text: str, pair: str | None = None) -> np.ndarray:
        """One run on a short input: proves the model works and shows its output's shape."""
        ((_, _, out),) = self.run([self.tokenizer.encode(text, pair)], 1)
        return out


def open_onnx(
    folder: Path,
    role: str,
    max_length: int | None,
    intra_op_threads: int,
    cache: Path | None = None,
    strategy: str = "longest_first",
) -> Onnx:
    """`folder`'s model.onnx and tokenizer.json, checked for inputs we can feed."""
    tokenizer = open_tokenizer(folder, max_length, strategy)
    session = open_session(folder, intra_op_threads, cache)
    names = check_inputs(session, role)
    return Onnx(session, tokenizer, names, session.get_outputs()[0].name, pad_id(tokenizer))
