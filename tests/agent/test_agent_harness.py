"""`plumbline agent run` end to end with a real fake agent (tests/agent/fake_agent.py).

The fake agent fixes the planted bugs when the treatment arm's HINT.md is in its workspace and
fails otherwise, so the records must lead `plumbline compare` to the A/B schema's decision for the
treatment; the other tests check what the harness promises: isolation, interleaving, time
limits, infrastructure failures, protected paths, secrets, and git sources.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner
from tests.agent.helpers import (
    FAKE_AGENT,
    arms,
    example_data,
    fake_agent,
    gone,
    one_task,
    read_jsonl,
)

from plumbline.agent.workspace import ALLOWED_ENV
from plumbline.cli.main import main
from plumbline.records.run_record import RunRecord, run_record_schema

MakeSuite = Callable[..., Path]


def kept_workspaces(tmp_path: Path) -> tuple[str, ...]:
    """`--keep-workspaces` with the trial directories under `tmp_path` (the default, the
    system's temporary directory, would keep them there after the test)."""
    trials = tmp_path / "trials"
    trials.mkdir(exist_ok=True)
    return ("--workdir", str(trials), "--keep-workspaces")


def run(suite: Path, output: Path, *extra: str, agent: str | None = None) -> dict[str, Any]:
    """`plumbline agent run SUITE --json`; the result document."""
    result = CliRunner().invoke(
        main,
        [
            "agent",
            "run",
            str(suite),
            "--agent",
            agent or fake_agent(),
            "--profile",
            "claude-code",
            "-o",
            str(output),
            "--kill-grace",
            "0.3",
            # The fake agent calls no model: its records carry its own report, and say so
            # (usage_note). Metered trials: test_meter_harness.py, test_real_agents.py.
            "--no-meter",
            "--json",
            *extra,
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def records(output: Path) -> list[dict[str, Any]]:
    return read_jsonl(output / "records.jsonl")


def test_example_suite_records_lead_compare_to_prefer_the_treatment(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    suite = make_suite()
    out = tmp_path / "results"
    site = tmp_path / "site"
    document = run(
        suite,
        out,
        "--repeats",
        "2",
        "--concurrency",
        "2",
        "--seed",
        "7",
        "--collect-analyze",
        "--html",
        str(site),
        "--duration-from",
        "agent",
    )
    found = records(out)
    assert len(found) == 8 and document["ran"] == 8
    keys = {(r["task_id"], r["arm"], r["repeat"]) for r in found}
    assert len(keys) == 8
    validator = jsonschema.Draft202012Validator(
        run_record_schema(), format_checker=jsonschema.FormatChecker()
    )
    for record in found:
        assert list(validator.iter_errors(record)) == []
        RunRecord.model_validate(record)
        assert record["success"] is (record["arm"] == "with_hint")
        assert (out / record["diff_file"]).is_file()
        assert (out / record["prompt_file"]).is_file()
    # Usage parsed from the agent's Claude Code result object.
    treated = next(r for r in found if r["arm"] == "with_hint")
    assert treated["input_tokens"] == 1_200 and treated["cache_write_tokens"] == 500
    assert treated["total_cost_usd"] == 0.021 and treated["step_count"] == 3
    assert treated["duration_seconds"] == 20.0 and treated["duration_source"] == "agent"
    assert treated["agent_duration_seconds"] == 20.0 and treated["harness_duration_seconds"] < 20
    assert (
        treated["usage_source"] == "agent-reported" and "metering is off" in treated["usage_note"]
    )
    assert treated["model"] == "claude-sonnet-4-5" and treated["agent"] == "claude-code"
    assert treated["acceptance_cmd_count"] is None  # plain json output names no commands
    # The A/B schema's decision, through --collect-analyze and through `plumbline compare`.
    assert document["compare"]["decision"] == "prefer with_hint"
    assert json.loads((out / "compare.json").read_text())["decision"] == "prefer with_hint"
    markdown = (out / "compare.md").read_text()
    assert "## Every difference between arms" in markdown and "| add_files | — |" in markdown
    assert document["arm_differences"][0]["field"] == "add_files"
    # The A/B page of the HTML site states the decision and every difference between arms.
    page = (site / "compare-results" / "index.html").read_text(encoding="utf-8")
    assert "prefer with_hint" in page and "Every difference between arms" in page
    assert "HINT.md (sha256" in page and (site / "index.html").is_file()
    assert "Identical in every arm: repository and revision" in page
    compared = CliRunner().invoke(
        main, ["compare", str(out / "records.jsonl"), "--control", "without_hint", "--json"]
    )
    assert json.loads(compared.stdout)["decision"] == "prefer with_hint"
    # The prompt is identical across arms: the only difference listed is the hint file.
    plan = json.loads((out / "plan.json").read_text())
    assert [d["field"] for d in plan["differences"]] == ["add_files"]
    prompts = out / "prompts" / "fix-add"
    assert (prompts / "with_hint.txt").read_text() == (prompts / "without_hint.txt").read_text()


def test_records_follow_the_seeded_interleaved_schedule(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    suite = make_suite({"tasks": one_task()})
    out = tmp_path / "results"
    run(suite, out, "--repeats", "3", "--seed", "3")
    plan = json.loads((out / "plan.json").read_text())
    found = records(out)
    # One at a time, records land in schedule order, each with its position.
    assert [r["schedule_position"] for r in found] == list(range(6))
    assert [(r["task_id"], r["arm"], r["repeat"]) for r in found] == [
        (u["task_id"], u["arm"], u["repeat"]) for u in plan["schedule"]
    ]
    sequence = [r["arm"] for r in found]
    assert sequence[:3] != [sequence[0]] * 3  # never all of one arm first
    for start in range(0, 6, 2):
        assert sorted(sequence[start : start + 2]) == ["with_hint", "without_hint"]
    out_abba = tmp_path / "abba"
    run(suite, out_abba, "--repeats", "2", "--order", "abba")
    assert [r["arm"] for r in records(out_abba)] == [
        "without_hint",
        "with_hint",
        "with_hint",
        "without_hint",
    ]


def test_trials_are_hermetic_and_the_control_cannot_see_the_treatment(
    make_suite: MakeSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLUMBLINE_TEST_LEAK", "should-not-pass")
    suite = make_suite(
        {
            "tasks": one_task(),
            "env": {"FAKE_REPORT": "1"},
            "arms": arms(with_={"env": {"TREATMENT_ONLY": "yes"}}),
        }
    )
    out = tmp_path / "results"
    run(suite, out, "--repeats", "2", *kept_workspaces(tmp_path))
    reports = {}
    for record in records(out):
        workspace = Path(record["workspace"])
        report = json.loads((workspace / ".agent-report.json").read_text())
        reports[(record["arm"], record["repeat"])] = (workspace, report)
    homes = set()
    for (arm, _), (workspace, report) in reports.items():
        trial = workspace.parent
        assert report["cwd"] == str(workspace)
        assert report["git_toplevel"] == str(workspace)
        assert Path(report["home"]).parent == trial
        assert Path(report["claude_config_dir"]).is_relative_to(trial)
        assert report["git_log"] == "plumbline <plumbline@localhost> 2000-01-01T00:00:00+00:00"
        allowed = {*ALLOWED_ENV, "HOME", "TMPDIR", "GIT_CEILING_DIRECTORIES", "CLAUDE_CONFIG_DIR"}
        allowed.add("PWD")  # set by bubblewrap's --chdir
        allowed |= {"CODEX_HOME", "FAKE_REPORT", "TREATMENT_ONLY"}
        allowed |= set(example_data()["env"])  # the example suite's switches
        allowed |= {n for n in report["env_names"] if n.startswith("XDG_")}
        assert set(report["env_names"]) <= allowed
        assert "PLUMBLINE_TEST_LEAK" not in report["env_names"]
        assert not any("home_files" in f for f in report["home_files"])
        homes.add(report["home"])
        if arm == "without_hint":
            assert report["ancestors_with_hint"] == []
            assert "TREATMENT_ONLY" not in report["env_names"]
            assert "HINT" not in report["prompt"]
        else:
            assert report["ancestors_with_hint"] == [str(workspace)]
    assert len(homes) == 4  # every trial its own HOME


def test_timeout_kills_the_agent_group_and_counts_as_a_failure(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    suite = make_suite(
        {
            "tasks": one_task(timeout_seconds=4),
            "arms": arms(
                with_={
                    "env": {
                        "FAKE_SLEEP": "120",
                        "FAKE_IGNORE_TERM": "1",
                        "FAKE_GRANDCHILD_PIDFILE": str(pidfile),
                    }
                }
            ),
        }
    )
    out = tmp_path / "results"
    # Unconfined (--sandbox none), where the process group is the only wall: the grandchild's
    # pid file is on the host. Sandboxed trials: tests/agent/test_agent_sandbox.py.
    document = run(suite, out, "--repeats", "1", "--sandbox", "none")
    by_arm = {r["arm"]: r for r in records(out)}
    timed = by_arm["with_hint"]
    assert timed["timed_out"] is True and timed["success"] is False
    assert timed["agent_exit_code"] == -9  # SIGTERM ignored, SIGKILL after the grace period
    assert timed["duration_source"] == "harness" and timed["input_tokens"] is None
    assert timed["infra_failure"] is False
    assert by_arm["without_hint"]["timed_out"] is False
    grandchild = int(pidfile.read_text())

    assert gone(grandchild)
    assert document["arms"]["with_hint"]["timed_out"] == 1


def test_infrastructure_failures_are_classified_and_recorded(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    suite = make_suite(
        {"tasks": one_task(), "arms": arms(with_={"setup": ["echo preparing", "exit 3"]})}
    )
    out = tmp_path / "results"
    document = run(suite, out, "--repeats", "1")
    by_arm = {r["arm"]: r for r in records(out)}
    failed = by_arm["with_hint"]
    assert failed["infra_failure"] is True
    assert failed["infra_failure_kind"] == "arm_setup_failed"
    assert failed["arm_setup_exit_code"] == 3
    assert "'exit 3' exited with 3" in failed["infra_failure_reason"]
    assert by_arm["without_hint"]["infra_failure"] is False
    assert document["arms"]["with_hint"]["infra_failures"] == {"arm_setup_failed": 1}

    # Recorded infrastructure failures count as done, unless asked to retry them.
    assert run(suite, out, "--repeats", "1")["ran"] == 0
    retried = run(suite, out, "--repeats", "1", "--retry-infra")
    assert retried["ran"] == 1
    kinds = [r["infra_failure_kind"] for r in records(out)]
    assert kinds.count("arm_setup_failed") == 2 and kinds.count(None) == 1


def test_a_missing_agent_is_a_usage_error_before_any_trial(
    make_suite: MakeSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite({"tasks": one_task()})
    for agent in ("no-such-agent-binary -p {prompt}", "./no-such-agent.py -p {prompt}"):
        out = tmp_path / "missing"
        result = CliRunner().invoke(
            main, ["agent", "run", str(suite), "--agent", agent, "-o", str(out)]
        )
        assert result.exit_code == 2, result.output
        assert "no-such-agent" in result.output and "no trial was started" in result.output
        assert not (out / "records.jsonl").exists()

    # A relative agent path means the file next to the user, not one in the trial workspace.
    here = tmp_path / "cwd"
    (here / "bin").mkdir(parents=True)
    script = here / "bin" / "agent.sh"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE_AGENT} "$@"\n')
    script.chmod(0o755)
    monkeypatch.chdir(here)
    out = tmp_path / "relative"
    relative = "bin/agent.sh -p {prompt} --output-format json"
    # The script runs the fake agent by a path only its text names: mounted read-only.
    document = run(suite, out, "--repeats", "1", "--mount-ro", str(FAKE_AGENT), agent=relative)
    assert document["ran"] == 2
    found = records(out)
    assert [r["infra_failure"] for r in found] == [False, False]
    assert {r["arm"]: r["success"] for r in found} == {"with_hint": True, "without_hint": False}
    plan = json.loads((out / "plan.json").read_text())
    assert plan["arms"]["with_hint"]["agent"].startswith(f"{script} -p {{prompt}}")


def test_protected_paths_are_flagged_and_restored_before_acceptance(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    tasks = one_task()
    cheat = arms(with_={"env": {"FAKE_CHEAT": "1"}})
    out = tmp_path / "results"
    run(make_suite({"tasks": tasks, "arms": cheat}), out, "--repeats", "1")
    record = next(r for r in records(out) if r["arm"] == "with_hint")
    assert record["protected_paths_modified"] == ["test_calc.py"]
    assert record["protected_paths_restored"] is True
    # The hint fixed calc.py too, and the original tests pass on it.
    assert record["success"] is True
    assert "-        self.assertEqual(add(2, 3), 5)" in (out / record["diff_file"]).read_text()

    # The control "fixes" nothing but rewrites the tests; restored, they fail.
    cheating_control = arms(without={"env": {"FAKE_CHEAT": "1"}})
    out2 = tmp_path / "control"
    run(make_suite({"tasks": tasks, "arms": cheating_control}, name="s2"), out2, "--repeats", "1")
    control = next(r for r in records(out2) if r["arm"] == "without_hint")
    assert control["protected_paths_modified"] == ["test_calc.py"]
    assert control["success"] is False and control["acceptance_exit_code"] != 0

    # Without restoring, the rewritten tests pass, and the record still says why.
    out3 = tmp_path / "unrestored"
    suite = make_suite(
        {"tasks": tasks, "arms": cheating_control, "restore_protected": False}, name="s3"
    )
    run(suite, out3, "--repeats", "1")
    control = next(r for r in records(out3) if r["arm"] == "without_hint")
    assert control["success"] is True and control["protected_paths_restored"] is False
    assert control["protected_paths_modified"] == ["test_calc.py"]


def test_passed_secrets_reach_the_agent_and_nothing_else(
    make_suite: MakeSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("FAKE_API_KEY", secret)
    suite = make_suite(
        {
            "tasks": one_task(),
            "env": {"FAKE_REPORT": "1", "FAKE_SECRET_NAME": "FAKE_API_KEY"},
        }
    )
    out = tmp_path / "results"
    run(suite, out, "--repeats", "1", "--pass-env", "FAKE_API_KEY")
    expected_hash = hashlib.sha256(secret.encode()).hexdigest()
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written
    for path in written:
        assert secret.encode() not in path.read_bytes(), path
    logs = b"".join(p.read_bytes() for p in (out / "logs").rglob("*") if p.is_file())
    assert b"[redacted FAKE_API_KEY]" in logs
    diffs = "".join(p.read_text() for p in (out / "diffs").iterdir())
    assert expected_hash in diffs  # the agent did get the key
    assert json.loads((out / "plan.json").read_text())["pass_env"] == ["FAKE_API_KEY"]

    # Not passed, it does not reach the agent.
    out2 = tmp_path / "not-passed"
    run(suite, out2, "--repeats", "1")
    diffs = "".join(p.read_text() for p in (out2 / "diffs").iterdir())
    assert expected_hash not in diffs and '"secret_sha256": null' in diffs


def test_a_secret_passed_to_one_arm_never_reaches_the_other(
    make_suite: MakeSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--pass-env ARM:NAME` and the suite's arm `pass_env`: that arm's agent alone gets it."""
    secret = "sk-arm-only-0123456789abcdef"
    digest = hashlib.sha256(secret.encode()).hexdigest()
    monkeypatch.setenv("FAKE_API_KEY", secret)
    env = {"FAKE_REPORT": "1", "FAKE_SECRET_NAME": "FAKE_API_KEY"}

    def diffs_by_arm(out: Path) -> dict[str, str]:
        return {r["arm"]: (out / r["diff_file"]).read_text() for r in records(out)}

    suite = make_suite({"tasks": one_task(), "env": env})
    out = tmp_path / "option"
    run(suite, out, "--repeats", "1", "--pass-env", "with_hint:FAKE_API_KEY")
    found = diffs_by_arm(out)
    assert digest in found["with_hint"] and digest not in found["without_hint"]
    assert '"secret_sha256": null' in found["without_hint"]
    assert json.loads((out / "plan.json").read_text())["arm_pass_env"] == {
        "with_hint": ["FAKE_API_KEY"]
    }
    assert all(secret.encode() not in p.read_bytes() for p in out.rglob("*") if p.is_file())

    suite = make_suite(
        {"tasks": one_task(), "env": env, "arms": arms(without={"pass_env": ["FAKE_API_KEY"]})}
    )
    out = tmp_path / "suite"
    run(suite, out, "--repeats", "1")
    found = diffs_by_arm(out)
    assert digest in found["without_hint"] and digest not in found["with_hint"]

    result = CliRunner().invoke(
        main,
        [
            *("agent", "run", str(suite), "--agent", fake_agent()),
            *("-o", str(tmp_path / "x"), "--pass-env", "nosuch:FAKE_API_KEY"),
        ],
    )
    assert result.exit_code == 2 and "the suite has no arm 'nosuch'" in result.output


def test_a_passed_secret_leaks_in_no_encoding(
    make_suite: MakeSuite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The agent puts the key in a file name (git quotes it: octal escapes in the patch) and
    writes it base64-, URL-, JSON- and hex-encoded; no form reaches any saved file."""
    from plumbline.core.redaction import encoded_forms

    secret = "sk-ключ-plumbline+0123456789"
    monkeypatch.setenv("FAKE_API_KEY", secret)
    script = (
        "import base64, json, os, urllib.parse; k = os.environ['FAKE_API_KEY']; "
        "open(f'notes-{k}.md', 'w').write(k + '\\n'); "
        "open('encoded.txt', 'w').write('\\n'.join([base64.b64encode(k.encode()).decode(), "
        "urllib.parse.quote(k), json.dumps(k), k.encode().hex()]) + '\\n'); "
        "print(json.dumps({'key': k}))"
    )
    suite = make_suite({"tasks": one_task(), "env": {"FAKE_SHELL": f'python3 -c "{script}"'}})
    out = tmp_path / "results"
    run(suite, out, "--repeats", "1", "--pass-env", "FAKE_API_KEY")
    patch = b"".join(p.read_bytes() for p in (out / "diffs").iterdir())
    # git quoted the path (octal escapes for the Cyrillic letters); that form is redacted too
    assert b'"b/notes-[redacted FAKE_API_KEY].md"' in patch
    forms = encoded_forms(secret)
    assert len(forms) > 10
    for path in (p for p in out.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for form in forms:
            assert form.encode() not in data, (path, form)


def test_git_source_checks_out_the_revision_without_history(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    repo = tmp_path / "upstream"
    suite = make_suite({"tasks": one_task()})
    subprocess.run(["cp", "-r", str(suite.parent / "repo"), str(repo)], check=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "buggy")
    buggy = git("rev-parse", "HEAD")
    (repo / "calc.py").write_text((repo / "calc.py").read_text().replace("a - b", "a + b"))
    (repo / "SECRET_HISTORY.md").write_text("later commit\n")
    git("add", "-A")
    git("commit", "-qm", "fixed")
    git_suite = make_suite(
        {
            "tasks": one_task(source={"git": str(repo), "rev": buggy[:10]}),
            "env": {"FAKE_REPORT": "1"},
        },
        name="git-suite",
    )
    out = tmp_path / "results"
    run(git_suite, out, "--repeats", "1", *kept_workspaces(tmp_path))
    plan = json.loads((out / "plan.json").read_text())
    assert plan["tasks"][0]["commit"] == buggy
    for record in records(out):
        workspace = Path(record["workspace"])
        assert not (workspace / "SECRET_HISTORY.md").exists()
        report = json.loads((workspace / ".agent-report.json").read_text())
        assert len(report["git_log"].splitlines()) == 1  # one initial commit, no history
        assert record["success"] is (record["arm"] == "with_hint")


def test_stream_json_gives_tool_calls_and_generic_profile_gives_wall_clock(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    suite = make_suite({"tasks": one_task()})
    out = tmp_path / "stream"
    run(suite, out, "--repeats", "1", agent=fake_agent("stream-json"))
    by_arm = {r["arm"]: r for r in records(out)}
    assert by_arm["with_hint"]["tool_call_count"] == 2
    assert by_arm["without_hint"]["tool_call_count"] == 9
    assert {r["acceptance_cmd_count"] for r in by_arm.values()} == {1}

    generic = tmp_path / "generic"
    result = CliRunner().invoke(
        main,
        [
            "agent",
            "run",
            str(suite),
            "--agent",
            fake_agent(),
            "--profile",
            "generic",
            "-o",
            str(generic),
            "--repeats",
            "1",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    for record in records(generic):
        assert record["agent"] == "generic" and record["input_tokens"] is None
        assert record["duration_source"] == "harness"
        assert record["duration_seconds"] == record["harness_duration_seconds"]
        assert record["agent_exit_code"] == 0


def test_plan_lists_every_difference_and_hides_secret_looking_values(
    make_suite: MakeSuite,
) -> None:
    suite = make_suite(
        {
            "arms": arms(
                with_={
                    "env": {"MODE": "fast", "SERVICE_TOKEN": "abc123"},
                    "prompt_suffix": "\nRead HINT.md first.",
                    "setup": ["touch .ready"],
                }
            )
        }
    )
    result = CliRunner().invoke(main, ["agent", "plan", str(suite), "--json", "--repeats", "2"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    fields = [d["field"] for d in plan["differences"]]
    assert fields == ["setup", "add_files", "prompt_suffix", "env.MODE", "env.SERVICE_TOKEN"]
    token = next(d for d in plan["differences"] if d["field"] == "env.SERVICE_TOKEN")
    assert token["values"]["without_hint"] is None
    assert token["values"]["with_hint"].startswith("<hidden, sha256 ")
    assert "abc123" not in result.stdout
    assert len(plan["schedule"]) == 2 * 2 * 2
    text = CliRunner().invoke(main, ["agent", "plan", str(suite)]).output
    assert "Every difference between arms" in text and "env.MODE" in text


def test_a_changed_suite_is_refused_in_the_same_output_directory(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    out = tmp_path / "results"
    run(make_suite({"tasks": one_task()}), out, "--repeats", "1")
    changed = make_suite({"tasks": one_task(prompt="Something else entirely.")})
    result = CliRunner().invoke(
        main, ["agent", "run", str(changed), "--agent", fake_agent(), "-o", str(out)]
    )
    assert result.exit_code == 2
    assert "the suite's prompts, files or settings changed" in result.output


def test_trial_directories_inside_a_repository_are_refused(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    inside = tmp_path / "repo" / "trials"
    inside.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(tmp_path / "repo")], check=True)
    result = CliRunner().invoke(
        main,
        [
            "agent",
            "run",
            str(make_suite({"tasks": one_task()})),
            "--agent",
            fake_agent(),
            "-o",
            str(tmp_path / "out"),
            "--workdir",
            str(inside),
        ],
    )
    assert result.exit_code == 2
    assert "inside the git repository" in result.output
    assert not (tmp_path / "out" / "records.jsonl").exists()


def test_acceptance_has_its_own_time_limit_and_task_setup_failures_are_infra(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    hanging = one_task(acceptance="sleep 60", acceptance_timeout_seconds=0.5)
    out = tmp_path / "hanging"
    run(make_suite({"tasks": hanging}), out, "--repeats", "1")
    for record in records(out):
        assert record["acceptance_timed_out"] is True
        assert record["success"] is False and record["timed_out"] is False
        assert record["infra_failure"] is False

    broken = one_task(setup=["python3 -c 'raise SystemExit(4)'"])
    out2 = tmp_path / "setup"
    document = run(make_suite({"tasks": broken}, name="s2"), out2, "--repeats", "1")
    for record in records(out2):
        assert record["infra_failure_kind"] == "setup_failed"
        assert record["setup_exit_code"] == 4
    assert document["arms"]["without_hint"]["infra_failures"] == {"setup_failed": 1}


def test_arm_files_are_added_and_removed_before_the_initial_commit(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    suite = make_suite(
        {
            "tasks": one_task(setup=["echo built > build.txt"]),
            "arms": arms(
                without={"remove_files": ["README.md", "*.txt"]},
                with_={"add_files": [{"path": "docs/NOTE.md", "content": "inline note\n"}]},
            ),
        }
    )
    out = tmp_path / "results"
    run(suite, out, "--repeats", "1", *kept_workspaces(tmp_path))
    by_arm = {r["arm"]: r for r in records(out)}
    control = Path(by_arm["without_hint"]["workspace"])
    treatment = Path(by_arm["with_hint"]["workspace"])
    assert not (control / "README.md").exists() and not (control / "build.txt").exists()
    assert (treatment / "README.md").exists() and (treatment / "build.txt").exists()
    assert (treatment / "docs" / "NOTE.md").read_text() == "inline note\n"
    assert not (treatment / "HINT.md").exists()  # this arm's add_files replaced the example's
    # Setup and arm changes are in the initial commit: the diff holds only the agent's edits.
    for record in by_arm.values():
        diff = (out / record["diff_file"]).read_text()
        assert "NOTE.md" not in diff and "build.txt" not in diff and "README.md" not in diff
        assert "calc.py" in diff


def test_malformed_usage_is_unknown_and_the_run_still_counts(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    suite = make_suite({"tasks": one_task(), "env": {"FAKE_BAD_USAGE": "1"}})
    out = tmp_path / "results"
    run(suite, out, "--repeats", "1")
    for record in records(out):
        assert record["infra_failure"] is False
        assert record["input_tokens"] is None and record["total_cost_usd"] is None
        assert record.get("model_usage") is None  # its entry holds the bad count too
        assert record["output_tokens"] is not None  # the valid values are kept
        assert record["success"] is (record["arm"] == "with_hint")


def test_a_metered_run_counts_no_tokens_the_agent_only_claims(
    make_suite: MakeSuite, tmp_path: Path
) -> None:
    """The fake agent prints a Claude Code report of 1,200 input tokens but calls no model:
    metered (its claude-code profile is routed through the proxy), the records count zero,
    keep its claim beside, flag the difference, and `compare` gates on the counts and warns;
    mixed with an unmetered arm, `compare` says the sources differ."""
    suite = make_suite({"tasks": one_task()})
    out = tmp_path / "metered"
    arguments = ["agent", "run", str(suite), "--agent", fake_agent(), "--profile", "claude-code"]
    result = CliRunner().invoke(
        main, [*arguments, "-o", str(out), "--repeats", "1", "--collect-analyze", "--json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    treated = next(r for r in records(out) if r["arm"] == "with_hint")
    assert treated["usage_source"] == "metered" and treated["metered_usage"]["calls"] == 0
    assert treated["input_tokens"] == 0 and treated["agent_reported_usage"]["input_tokens"] == 1200
    assert treated["usage_discrepancy"] is None and treated["usage_discrepancy_flagged"] is True
    assert treated["duration_source"] == "harness" and treated["agent_duration_seconds"] == 20.0
    warnings = document["compare"]["comparisons"][0]["warnings"]
    assert any("more than 1% off what the harness metered" in w for w in warnings), warnings
    unmetered = tmp_path / "unmetered"
    run(suite, unmetered, "--repeats", "1")
    mixed = tmp_path / "mixed.jsonl"
    chosen = [r for r in records(out) if r["arm"] == "with_hint"]
    chosen += [r for r in records(unmetered) if r["arm"] == "without_hint"]
    mixed.write_text("".join(json.dumps(r) + "\n" for r in chosen))
    compared = CliRunner().invoke(
        main,
        ["compare", str(mixed), "--json", "--treatment", "with_hint", "--control", "without_hint"],
    )
    assert compared.exit_code == 0, compared.output
    warnings = json.loads(compared.stdout)["comparisons"][0]["warnings"]
    assert any("come from different sources" in w for w in warnings), warnings
