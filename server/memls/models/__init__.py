"""ONNX embedder, cross-encoder, late-interaction encoder and pair model: located in installed
packages (or configured folders), loaded lazily on their own thread pool, behind a circuit
breaker. Importing this package loads nothing. Unavailable models raise ModelUnavailable; they
are never replaced by fake output."""

from memls.models.breaker import CircuitBreaker
from memls.models.embedder import Embedder
from memls.models.late import LateEncoder
from memls.models.pair import PairModel
from memls.models.pool import THREAD_PREFIX, ModelPool
from memls.models.reranker import Reranker, to_probability
from memls.models.runtime import ModelRuntime, ModelsStatus, rerank_switch
from memls.models.status import ModelState, ModelStatus, ModelUnavailable

__all__ = [
    "THREAD_PREFIX",
    "CircuitBreaker",
    "Embedder",
    "LateEncoder",
    "ModelPool",
    "ModelRuntime",
    "ModelState",
    "ModelStatus",
    "ModelUnavailable",
    "ModelsStatus",
    "PairModel",
    "Reranker",
    "rerank_switch",
    "to_probability",
]
