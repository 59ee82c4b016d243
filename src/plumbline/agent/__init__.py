"""The agent A/B harness: run coding agents on tasks in two or more arms, fairly.

`load_suite` reads a suite (TOML or JSON); `make_plan` resolves its sources and agents and
builds the seeded, interleaved schedule; `Harness(plan, RunOptions(...)).run()` runs every
pending (task, arm, repeat) in a hermetic trial directory and appends one validated run record
per run to `records.jsonl`, ready for `plumbline compare`.
"""

from plumbline.agent.harness import Harness, RunError, RunOptions, RunResult
from plumbline.agent.plan import Plan, arm_differences, final_prompt, make_plan
from plumbline.agent.profiles import PROFILES, AgentCommand, AgentCommandError, resolve_agent
from plumbline.agent.schedule import Unit, build_schedule
from plumbline.agent.suite import AgentSuite, LoadedSuite, SuiteError, load_suite

__all__ = [
    "PROFILES",
    "AgentCommand",
    "AgentCommandError",
    "AgentSuite",
    "Harness",
    "LoadedSuite",
    "Plan",
    "RunError",
    "RunOptions",
    "RunResult",
    "SuiteError",
    "Unit",
    "arm_differences",
    "build_schedule",
    "final_prompt",
    "load_suite",
    "make_plan",
    "resolve_agent",
]
