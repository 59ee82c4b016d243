"""plumbline: honest, reproducible numbers about LLMs and coding agents."""

__version__ = "0.1.0"
