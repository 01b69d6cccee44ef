"""The CI workflows (.github/workflows): what they promise, checked without GitHub.

`nox -s lint` validates them with actionlint and the GitHub-workflow JSON schema; these tests
check the project's own rules: pinned actions, least privilege, timeouts, and commands that
the project's tools accept.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from ptnotes_dev import matrix

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
NAMES = [path.stem for path in WORKFLOWS]


def workflow(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(
        (ROOT / ".github" / "workflows" / f"{name}.yml").read_text()
    )
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def steps(name: str, job: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = workflow(name)["jobs"][job]["steps"]
    return found


def test_the_three_workflows_exist() -> None:
    assert {"docs", "tests", "matrix"} <= set(NAMES)


@pytest.mark.parametrize("path", WORKFLOWS, ids=NAMES)
def test_every_action_is_pinned_to_a_full_commit_with_its_version_beside_it(path: Path) -> None:
    uses = re.findall(r"^\s*(?:-\s+)?uses:\s*(.+)$", path.read_text(), re.MULTILINE)
    assert uses
    loose = [
        line
        for line in uses
        if not line.startswith("./")
        and not re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*", line.strip())
    ]
    assert loose == []


@pytest.mark.parametrize("name", NAMES)
def test_every_workflow_only_reads_unless_a_job_says_otherwise(name: str) -> None:
    assert workflow(name)["permissions"] == {"contents": "read"}


@pytest.mark.parametrize("name", NAMES)
def test_every_job_has_a_timeout(name: str) -> None:
    jobs = workflow(name)["jobs"]
    assert [job for job, spec in jobs.items() if "timeout-minutes" not in spec] == []


def test_tests_run_the_readme_command_on_every_push_and_pull_request() -> None:
    tests = workflow("tests")
    assert {"push", "pull_request"} <= set(tests["on"])
    assert "nox" in (ROOT / ".ci" / "run").read_text()  # the README's test command
    commands = [step.get("run", "") for step in steps("tests", "nox")]
    assert any(re.search(r"^nox(\s+--report\s+\S+)?$", c, re.MULTILINE) for c in commands)
    summary = next(s for s in steps("tests", "nox") if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
    assert summary["if"] == "always()"


def test_tests_use_the_docs_workflows_runner_pip_cache_and_cpu_index() -> None:
    docs, tests = workflow("docs")["jobs"]["build"], workflow("tests")["jobs"]["nox"]
    assert tests["runs-on"] == docs["runs-on"]
    assert tests["env"]["PIP_EXTRA_INDEX_URL"] == docs["env"]["PIP_EXTRA_INDEX_URL"]
    setup = [s for s in steps("tests", "nox") if "setup-python" in s.get("uses", "")]
    assert setup[0]["with"]["cache"] == "pip"


def test_the_matrix_runs_weekly_and_by_hand() -> None:
    on = workflow("matrix")["on"]
    assert "workflow_dispatch" in on
    (cron,) = [entry["cron"] for entry in on["schedule"]]
    _minute, _hour, day, month, weekday = cron.split()
    assert (day, month) == ("*", "*")  # every week: one weekday, every month
    assert weekday.isdigit()


def test_only_the_merge_job_may_write() -> None:
    jobs = workflow("matrix")["jobs"]
    writers = {job for job, spec in jobs.items() if "permissions" in spec}
    assert writers == {"merge"}
    assert jobs["merge"]["permissions"] == {"contents": "write", "pull-requests": "write"}


def test_the_shards_are_the_plans_strategy_matrix() -> None:
    jobs = workflow("matrix")["jobs"]
    assert jobs["shard"]["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    assert jobs["shard"]["strategy"]["fail-fast"] is False
    assert set(jobs["merge"]["needs"]) == {"plan", "shard", "cuda"}


def test_the_cuda_shard_is_skipped_unless_a_gpu_runner_is_named() -> None:
    cuda = workflow("matrix")["jobs"]["cuda"]
    assert cuda["if"] == "vars.PTNOTES_GPU_RUNNER != ''"
    assert cuda["runs-on"] == "${{ vars.PTNOTES_GPU_RUNNER }}"
    assert any("doctest_cuda -- --record-results" in s.get("run", "") for s in cuda["steps"])


def matrix_commands() -> list[list[str]]:
    """The arguments CI passes to `python -m ptnotes_dev.matrix`, variables filled in."""
    found = []
    for job in workflow("matrix")["jobs"].values():
        for step in job["steps"]:
            for line in step.get("run", "").splitlines():
                if "nox -s matrix --" not in line:
                    continue
                words = shlex.split(line.split("nox -s matrix --", 1)[1])
                words = [w.replace("${shards[@]}", "shards/shard-2.16.0.json") for w in words]
                words = [w for w in words if not w.startswith("${")]  # "${args[@]}": optional
                words = [w.replace("$RELEASE", "2.16.0") for w in words]
                found.append(words if words[0] in ("plan", "merge") else ["run", *words])
    return found


def test_every_matrix_command_of_the_workflow_is_one_the_cli_accepts() -> None:
    commands = matrix_commands()
    assert [c[0] for c in commands] == ["plan", "run", "merge"]
    parser = matrix.build_parser()
    for command in commands:
        parser.parse_args(command)  # exits (fails the test) on an unknown option
    shard = parser.parse_args(commands[1] + ["--unit-tests"])
    assert shard.output == "shards/shard-2.16.0.json"
    assert shard.release == ["2.16.0"]
    assert shard.unit_tests is True
    merge = parser.parse_args(commands[2])
    assert merge.results == ["shards/shard-2.16.0.json"]


def test_the_merge_fails_with_a_message_when_no_shard_was_uploaded() -> None:
    (step,) = [s for s in steps("matrix", "merge") if s.get("name") == "Merge the shards"]
    script = step["run"]
    assert "nullglob" in script
    assert script.index("exit 1") < script.index("nox -s matrix -- merge")


def test_each_attempt_of_a_run_pushes_a_branch_of_its_own() -> None:
    (step,) = [s for s in steps("matrix", "merge") if "gh pr create" in s.get("run", "")]
    assert "github.run_attempt" in step["env"]["BRANCH"]
