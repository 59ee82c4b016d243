"""Inspect model providers shipped with plumbline.

`scripted/oracle` and `scripted/weak` are offline, SCRIPTED stand-ins for language models that
answer SA Bench prompts from the reference data (see `plumbline.models.scripted`). Inspect finds
them through the `inspect_ai` entry point, which imports `plumbline.models.providers`.
"""
