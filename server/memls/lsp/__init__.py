"""The language-server front: memory/* requests, workspace notes, contradiction diagnostics."""
