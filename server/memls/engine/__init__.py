"""The engine: the one service API behind every front (see `facade`)."""

from memls.engine.core import MAX_TEXT
from memls.engine.facade import Engine

__all__ = ["MAX_TEXT", "Engine"]
