"""Fleet answers a person can read in ten seconds (issue 23), on fleets made from the
reference example (examples/blackwell-kimi: ``NCCL_PROTO=LL`` at vllm-kimi.service:15).

Expected before running, from what the hosts are: NCCL reads ``NCCL_PROTO`` from the
process environment, so hosts whose unit sets ``Simple`` have Simple, a host whose unit lost
the line has it unset (NCCL's default); an empty directory is no snapshot at all (failed,
not "differs"); a host with no unit starting an engine has no model server; the exit code
is 0 only when every host answered, 8 when some did not, 7 when none did (README)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from agentkit import Orchestrator
from agentkit._fleet._names import expand
from agentkit._fleet._snapfleet import SnapshotFleet
from agentkit._trace._read import read_trace
from agentkit._trace._report import render_report
from agentkit._types import Answer
from benchmarks._fleet_hosts import make_reference_fleet

REPO = Path(__file__).resolve().parent.parent
QUESTION = "Is NCCL tuned the same on all nodes?"
HASH = re.compile(r"#[0-9a-f]{8}\b")


def ask(root: Path, trace: Path | None = None) -> Answer:
    from agentkit._trace import Trace

    async def go() -> Answer:
        kw = {"trace": Trace(trace)} if trace else {}
        orch = Orchestrator.fleet(SnapshotFleet(root), **kw)
        async with orch:
            return await orch.investigate(QUESTION)

    return anyio.run(go)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Answer, Path]:
    root = tmp_path_factory.mktemp("ref")
    make_reference_fleet(root / "f", 24, simple=(7, 12, 19), unset=(9,), empty=(15, 21))
    trace = root / "t.jsonl"
    return root / "f", ask(root / "f", trace), trace


def test_the_bottom_line_names_the_differing_values_in_plain_words(
        reference: tuple[Path, Answer, Path]) -> None:
    _, answer, _ = reference
    lines = [c.text for c in answer.bottom_line]
    assert len(lines) <= 8, lines
    assert lines[0].startswith("No: 4 of 22 hosts differ (gpu[007,009,012,019])"), lines[0]
    [proto] = [t for t in lines if t.startswith("NCCL_PROTO: ")]
    assert proto.startswith("NCCL_PROTO: LL on 18 hosts (")
    assert "Simple on gpu[007,012,019] (vllm-kimi.service:15)" in proto
    assert "unset on gpu009" in proto
    assert not any(HASH.search(t) for t in lines), lines  # no value hashes
    # what follows from that one line (the environment, the command line, the claims
    # quoting them, each in three tasks) is not listed again
    assert not any(w in t for t in lines for w in ("environment", "exec_start", "findings"))
    assert len([t for t in lines if "gpu[007,012,019]" in t]) == 1


def test_empty_snapshots_fail_with_one_line_and_are_not_compared(
        reference: tuple[Path, Answer, Path]) -> None:
    _, answer, _ = reference
    assert answer.fleet is not None
    assert set(expand(answer.fleet.buckets["failed"])) == {"gpu015", "gpu021"}
    assert answer.fleet.counts["differs"] == 4 and answer.fleet.counts["ok"] == 18
    [problem] = answer.fleet.problems
    assert "empty snapshot" in problem.error
    [line] = [c.text for c in answer.bottom_line if c.text.startswith("failed on ")]
    assert line.startswith("failed on gpu[015,021] (2 hosts): empty snapshot")


def test_json_and_html_carry_the_same_per_fact_values(
        reference: tuple[Path, Answer, Path], tmp_path: Path) -> None:
    _, answer, trace = reference
    assert answer.fleet is not None
    data = json.loads(answer.model_dump_json())["fleet"]
    [proto] = [f for f in data["compared"] if f["label"] == "NCCL_PROTO"]
    got = {g["text"]: (g["nodes"], g["where"]) for g in proto["groups"]}
    where = ["/etc/systemd/system/vllm-kimi.service:15"]
    assert got["Simple"] == ("gpu[007,012,019]", where)
    assert got["unset"] == ("gpu009", [])
    assert got["LL"][1] == where and len(expand(got["LL"][0])) == 18
    page = render_report(read_trace(trace))
    assert 'data-fact="nccl-env · NCCL_PROTO"' in page
    assert "Simple (set at /etc/systemd/system/vllm-kimi.service:15)" in page
    assert not HASH.search(page)


def test_a_fleet_with_no_model_server_is_not_the_same_on_all_hosts(tmp_path: Path) -> None:
    make_reference_fleet(tmp_path / "f", 3, no_server=(1, 2, 3))
    answer = ask(tmp_path / "f")
    assert answer.fleet is not None
    assert answer.fleet.buckets == {"no-server": "gpu[001-003]"}
    assert "no model server found" in answer.fleet.problems[0].error
    text = " ".join(c.text for c in answer.bottom_line)
    assert "the same on all" not in text.lower()
    assert answer.bottom_line[0].text.startswith("Not established: no host answered")


def cli(root: Path, trace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", "ask", QUESTION, "--fleet",
                           str(root), "-q", "--json", "--trace", str(trace)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)


@pytest.mark.parametrize(("hosts", "code"), [
    ({}, 0),                                  # every host answered
    ({"no_server": (2,)}, 9),                 # one host has nothing to compare
    ({"empty": (3,)}, 9),                     # one host's snapshot is empty
    ({"no_server": (1, 2, 3)}, 7),            # no host answered with anything
])
def test_exit_codes_for_scripts(tmp_path: Path, hosts: dict[str, tuple[int, ...]],
                                code: int) -> None:
    make_reference_fleet(tmp_path / "f", 3, **hosts)
    done = cli(tmp_path / "f", tmp_path / "t.jsonl")
    assert done.returncode == code, done.stderr
    assert json.loads(done.stdout)["fleet"]["hosts"] == 3


# ------------------------------------------------ the fold of compared facts, property-based

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from agentkit._catalog._template import Compare  # noqa: E402
from agentkit._fleet._bottom import MAX_BULLETS  # noqa: E402
from agentkit._fleet._fold import Fold  # noqa: E402
from agentkit._fleet._outcome import HostOutcome  # noqa: E402
from agentkit._types import Fact, TaskResult  # noqa: E402

SPECS = {"t": [Compare(fact="nccl_settings", each=True), Compare(fact="engine")]}


def _host(proto: str | None, engine: str) -> list[TaskResult]:
    settings_ = [{"name": "NCCL_DEBUG", "value": "WARN", "where": "/etc/nccl.conf:2"}]
    if proto is not None:
        settings_.append({"name": "NCCL_PROTO", "value": proto, "where": "/u.service:15"})
    return [TaskResult(task_id="t", status="ok", summary="", facts={
        "nccl_settings": Fact(value=settings_), "engine": Fact(value=engine)})]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["LL", "Simple", "LL128", None]),
                          st.sampled_from(["vllm", "sglang"])), min_size=1, max_size=12))
def test_compared_facts_group_exactly_the_hosts_that_have_each_value(
        hosts: list[tuple[str | None, str]]) -> None:
    names = [f"h{i:02d}" for i in range(len(hosts))]
    fold = Fold("test", names, ["t"], SPECS)
    for name, (proto, engine) in zip(names, hosts, strict=True):
        fold.add(HostOutcome(host=name, status="ok", results=_host(proto, engine)))
    fleet = fold.fleet()
    by_label = {f.label: f for f in fleet.compared}
    # the oracle: a direct count of what each host was given ("unset" where it has no line)
    for label, truth in (("NCCL_PROTO", [p or "unset" for p, _ in hosts]),
                         ("engine", [e for _, e in hosts])):
        if label == "NCCL_PROTO" and all(p is None for p, _ in hosts):
            assert label not in by_label  # no host sets it: nothing to compare
            continue
        got = {g.text: set(expand(g.nodes)) for g in by_label[label].groups}
        want: dict[str, set[str]] = {}
        for name, value in zip(names, truth, strict=True):
            want.setdefault(value, set()).add(name)
        assert got == want
        counts = sorted((len(v) for v in want.values()), reverse=True)
        assert by_label[label].majority == (len(counts) == 1 or counts[0] > counts[1])
    assert by_label["NCCL_DEBUG"].uniform  # the same everywhere: never a differing line
    answer_lines = _bottom(fleet)
    assert len(answer_lines) <= MAX_BULLETS
    assert not any(HASH.search(t) for t in answer_lines)
    assert not any(t.startswith("NCCL_DEBUG") for t in answer_lines)


def _bottom(fleet: object) -> list[str]:
    from agentkit._fleet._bottom import bottom_line

    return [c.text for c in bottom_line("Is NCCL tuned the same?", fleet, [])]  # type: ignore[arg-type]


def test_many_differences_and_reasons_still_fit_eight_bullets() -> None:
    names = [f"h{i:02d}" for i in range(30)]
    fold = Fold("test", names, ["t"], SPECS)
    for i, name in enumerate(names[:20]):  # twelve variables, each odd on another host
        items = [{"name": f"NCCL_V{k:02d}", "value": "b" if i == k else "a",
                  "where": f"/u.service:{k}"} for k in range(12)]
        fold.add(HostOutcome(host=name, status="ok", results=[TaskResult(
            task_id="t", status="ok", summary="", facts={"nccl_settings": Fact(value=items),
                                                          "engine": Fact(value="vllm")})]))
    for i, name in enumerate(names[20:]):  # ten hosts, five different reasons
        fold.add(HostOutcome(host=name, status="unreachable", error=f"reason {i % 5}"))
    lines = _bottom(fold.fleet())
    assert len(lines) == MAX_BULLETS, lines
    assert lines[0].startswith("No: 12 of 20 hosts differ")
    assert any("more compared facts differ" in t for t in lines)
    assert any("6 more hosts did not answer" in t for t in lines)
    assert any("differ: NCCL_V03, NCCL_V04" in t for t in lines)  # those past the room named
    assert sum(t.startswith("unreachable on ") for t in lines) >= 1


@pytest.mark.parametrize(("question", "lead"), [
    ("Is NCCL tuned the same on all nodes?", "Yes: the same on all 3 hosts"),
    ("Do the nodes differ in NCCL tuning?", "No: the same on all 3 hosts"),
    ("Is NCCL tuned?", "The same on all 3 hosts"),  # a uniform fleet is not a "yes" to it
])
def test_the_verdict_answers_the_question_asked(tmp_path: Path, question: str,
                                                lead: str) -> None:
    make_reference_fleet(tmp_path / "f", 3)

    async def go() -> Answer:
        async with Orchestrator.fleet(SnapshotFleet(tmp_path / "f")) as orch:
            return await orch.investigate(question, tasks=["nccl-env"])

    first = anyio.run(go).bottom_line[0].text
    assert first.startswith(lead), first
    # what holds everywhere answers "Is NCCL tuned?": the reference unit sets NCCL_PROTO and
    # NCCL_P2P_LEVEL, so the tuning is in effect on every host
    assert "Everywhere that answered, NCCL tuning in effect: yes" in first
