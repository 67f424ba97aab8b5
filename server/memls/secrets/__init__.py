"""Secrets in memory text: found with detect-secrets' plugins (no network, no verification),
reported by kind and place, and redacted on request. A pure part below the engine: every write
path reaches it through the engine."""

from memls.secrets.detector import Finding, find, kinds, redact
from memls.secrets.screen import refusal, screen, where

__all__ = ["Finding", "find", "kinds", "redact", "refusal", "screen", "where"]
