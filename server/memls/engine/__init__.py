"""The engine: the one service API behind every front (see `facade`)."""

from memls.engine.facade import Engine
from memls.engine.shared import MAX_TEXT

__all__ = ["MAX_TEXT", "Engine"]
