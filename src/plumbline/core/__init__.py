"""The bottom layer every other layer may use: result types, formatting and escaping, schemas,
limits, redaction, progress callbacks and the executor registry.

Nothing here imports a package above it (`plumbline.stats` is the only plumbline package it uses);
import-linter's contracts in `pyproject.toml` keep it so.
"""
