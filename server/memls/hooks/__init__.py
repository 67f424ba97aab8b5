"""Agents' hooks: `client` is the command Claude Code runs (standard library only, so it
starts fast), `claude` merges memls's entries into Claude Code's settings files. Importing
this package imports nothing."""
