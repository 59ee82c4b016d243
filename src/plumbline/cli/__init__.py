"""Command-line interface: one module per command group, each thin (parse, call the job, render)."""
