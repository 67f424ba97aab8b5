"""memls: a local-first project memory for coding agents."""

__version__ = "0.1.0"
