"""Fleet investigations over a snapshot fleet (issue 14, tier 0): buckets, folding, citations,
the trace and its offline replay. Expected values follow from how the fleet is generated (a
driver per host, manifests cut off), never from what the code printed."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import anyio
import pytest

from agentkit import Limits, Orchestrator
from agentkit._fleet._fold import Fold
from agentkit._fleet._names import InventoryError, check_name, expand, fold
from agentkit._fleet._outcome import Batch, HostOutcome
from agentkit._fleet._snapfleet import SnapshotFleet
from agentkit._fleet_model import BUCKETS
from agentkit._trace import Trace
from agentkit._trace._read import read_trace
from agentkit._types import Answer, Fact, TaskResult
from benchmarks._fleet_hosts import DRIVER, OTHER_DRIVER, make_fleet

from .conftest import REPO

OUTLIERS, BROKEN = [100, 500, 900], [13, 777]


def ask(fleet_dir: Path, trace: Path | None = None, **kw: object) -> Answer:
    orch = Orchestrator.fleet(SnapshotFleet(fleet_dir), trace=Trace(trace) if trace else None)
    return anyio.run(lambda: orch.investigate("Which driver?", tasks=["gpu-inventory"], **kw))


@pytest.fixture(scope="module")
def thousand(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Answer, Path]:
    root = tmp_path_factory.mktemp("fleet")
    make_fleet(root / "f", 1000, outliers=OUTLIERS, broken=BROKEN)
    answer = ask(root / "f", root / "t.jsonl")
    return root / "f", answer, root / "t.jsonl"


def test_every_host_lands_in_exactly_one_bucket(thousand: tuple[Path, Answer, Path]) -> None:
    _, answer, _ = thousand
    assert answer.fleet is not None
    members = {b: set(expand(nodes)) for b, nodes in answer.fleet.buckets.items()}
    seen = [h for hs in members.values() for h in hs]
    assert len(seen) == len(set(seen)) == 1000
    assert members["differs"] == {"n0100", "n0500", "n0900"}
    assert members["failed"] == {"n0013", "n0777"}
    assert answer.fleet.counts == {"ok": 995, "differs": 3, "no-server": 0, "failed": 2,
                                   "unreachable": 0, "timed-out": 0, "unknown-key": 0,
                                   "changed-key": 0}
    assert answer.fleet.recap == "ok=995 differs=3 failed=2"  # buckets with no host left out


def test_one_majority_range_and_the_outliers_named_with_their_own_evidence(
        thousand: tuple[Path, Answer, Path]) -> None:
    _, answer, _ = thousand
    assert answer.fleet is not None
    driver = next(f for f in answer.fleet.facts if f.fact == "driver")
    assert driver.majority and [g.count for g in driver.groups] == [995, 3]
    assert driver.groups[0].value["driver_version"] == DRIVER
    assert driver.groups[1].value["driver_version"] == OTHER_DRIVER
    assert driver.groups[1].nodes == "n[0100,0500,0900]"
    assert len(expand(driver.groups[0].nodes)) == 995  # one range, not 995 names
    cites = {c.id: c for c in answer.citations}
    outlier = [cites[i] for i in driver.groups[1].evidence]
    assert outlier and all(c.host == "n[0100,0500,0900]" for c in outlier)
    assert any(OTHER_DRIVER in c.excerpt for c in outlier)
    # the bottom line says the compared fact (gpu-inventory's `compare:`), in plain words
    claim = next(c for c in answer.bottom_line if c.text.startswith("driver: "))
    assert f"{OTHER_DRIVER} on n[0100,0500,0900]" in claim.text
    assert f"{DRIVER} on 995 hosts" in claim.text
    assert set(driver.groups[1].evidence) <= set(claim.evidence)


def test_broken_snapshots_fail_as_one_line_naming_both(
        thousand: tuple[Path, Answer, Path]) -> None:
    _, answer, _ = thousand
    assert answer.fleet is not None
    [problem] = answer.fleet.problems
    assert (problem.bucket, problem.nodes, problem.count) == ("failed", "n[0013,0777]", 2)
    assert "SnapshotError" in problem.error and "<snapshot>" in problem.error


def test_the_trace_records_each_host_and_replays_offline(
        thousand: tuple[Path, Answer, Path], tmp_path: Path) -> None:
    _, answer, trace = thousand
    from agentkit._fleet._record import read_outcomes
    from agentkit._replay import replay_trace

    tf = read_trace(trace)
    outcomes = read_outcomes(tf.events)
    assert sorted(o.host for o in outcomes) == [f"n{i:04d}" for i in range(1, 1001)]
    assert {o.host for o in outcomes if o.status == "failed"} == {"n0013", "n0777"}
    # identical results are written once: far less than a thousand copies
    assert trace.stat().st_size < 1000 * 2000
    moved = tmp_path / "elsewhere.jsonl"  # the fleet directory is not needed to replay
    moved.write_bytes(trace.read_bytes())
    result = anyio.run(replay_trace, moved)
    assert result.identical and result.answer == answer.model_copy(
        update={"usage": result.answer.usage})


def test_a_tie_has_no_majority_and_every_host_differs() -> None:
    fold_ = Fold("test", ["a1", "a2"])
    for host, v in (("a1", "x"), ("a2", "y")):
        fold_.add(HostOutcome(host=host, status="ok", results=[TaskResult(
            task_id="t", status="ok", summary="", facts={"k": Fact(value=v)})]))
    fleet = fold_.fleet()
    fact = next(f for f in fleet.facts if f.fact == "k")
    assert not fact.majority and fleet.counts["differs"] == 2 and fleet.counts["ok"] == 0


def test_values_are_compared_canonically_not_by_key_order() -> None:
    fold_ = Fold("test", ["a1", "a2"])
    for host, v in (("a1", {"x": 1, "y": 2}), ("a2", {"y": 2, "x": 1})):
        fold_.add(HostOutcome(host=host, status="ok", results=[TaskResult(
            task_id="t", status="ok", summary="", facts={"k": Fact(value=v)})]))
    assert fold_.fleet().counts["ok"] == 2


def test_a_fact_one_host_lacks_is_a_difference() -> None:
    fold_ = Fold("test", ["a1", "a2", "a3"])
    for host in ("a1", "a2", "a3"):
        facts = {"k": Fact(value=1)} if host != "a3" else {}
        fold_.add(HostOutcome(host=host, status="ok", results=[TaskResult(
            task_id="t", status="ok", summary="", facts=facts)]))
    fleet = fold_.fleet()
    assert fleet.buckets["differs"] == "a3" and fleet.counts["ok"] == 2


class _Sloppy:
    """A transport that names one host twice and forgets another."""

    name = "sloppy"

    async def discover(self) -> list[str]:
        return ["h1", "h2", "h3"]

    async def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        for h in ("h1", "h1", "h2", "intruder"):
            yield HostOutcome(host=h, status="unreachable", error="down")


def test_a_transport_that_forgets_a_host_still_buckets_it() -> None:
    orch = Orchestrator.fleet(_Sloppy())  # type: ignore[arg-type]
    answer = anyio.run(lambda: orch.investigate("q", tasks=["gpu-inventory"]))
    assert answer.fleet is not None
    assert answer.fleet.buckets == {"unreachable": "h[1-2]", "failed": "h3"}
    assert sum(answer.fleet.counts.values()) == 3


class _Frozen:
    name = "frozen"

    async def discover(self) -> list[str]:
        return ["f1", "f2"]

    async def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        yield HostOutcome(host="f1", status="unreachable", error="down")
        await anyio.sleep(3600)
        yield HostOutcome(host="f2", status="ok")


def test_the_run_deadline_times_out_the_hosts_still_running(tmp_path: Path) -> None:
    orch = Orchestrator.fleet(_Frozen(), trace=Trace(tmp_path / "t.jsonl"))  # type: ignore
    answer = anyio.run(lambda: orch.investigate("q", tasks=["gpu-inventory"],
                                                limits=Limits(deadline_s=0.3)))
    assert answer.fleet is not None
    assert answer.fleet.buckets == {"unreachable": "f1", "timed-out": "f2"}


def test_an_interrupted_run_keeps_the_hosts_it_heard_from(tmp_path: Path) -> None:
    orch = Orchestrator.fleet(_Frozen(), trace=Trace(tmp_path / "t.jsonl"))  # type: ignore

    async def go() -> None:
        with anyio.move_on_after(0.3):
            await orch.investigate("q", tasks=["gpu-inventory"])

    anyio.run(go)
    orch.trace.close()
    tf = read_trace(tmp_path / "t.jsonl")
    assert [e.data["host"] for e in tf.events if e.kind == "host"] == ["f1"]
    end = tf.first("run", "end")
    assert end is not None and end.data["status"] == "cancelled"


@pytest.mark.parametrize("bad", ["h,1", "a b", "x@y", "-lead", "dot."])
def test_host_names_are_checked_before_folding(bad: str, tmp_path: Path) -> None:
    (tmp_path / bad).mkdir()
    with pytest.raises(InventoryError, match="not a plain host name"):
        anyio.run(SnapshotFleet(tmp_path).discover)


def test_ranges_expand_and_fold_back() -> None:
    assert expand("gpu[01-03]") == ["gpu01", "gpu02", "gpu03"]
    assert fold(["gpu03", "gpu01", "gpu02"]) == "gpu[01-03]"
    assert fold(["gpu1", "gpu01"]) in ("gpu[1,01]", "gpu[01,1]", "gpu01,gpu1")
    for bad in ("gpu[01-", "@all", ""):
        with pytest.raises(InventoryError):
            expand(bad)
    assert set(BUCKETS) == {"ok", "differs", "no-server", "failed", "unreachable", "timed-out",
                            "unknown-key", "changed-key"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], capture_output=True,
                          text=True, timeout=120, cwd=REPO)


def test_cli_fleet_answers_and_bad_input_is_one_line(tmp_path: Path) -> None:
    make_fleet(tmp_path / "f", 6, outliers=[2], broken=[5], width=2)
    done = cli("ask", "Which GPU driver runs here?", "--fleet", str(tmp_path / "f"), "--json",
               "-q", "--trace", str(tmp_path / "t.jsonl"))
    # one host's snapshot is cut off: the fleet answered, one host did not (README: exit 9)
    assert done.returncode == 9, done.stderr
    assert "1 of 6 hosts did not answer" in done.stderr
    fleet = json.loads(done.stdout)["fleet"]
    assert fleet["buckets"]["differs"] == "n02" and fleet["buckets"]["failed"] == "n05"
    assert fleet["buckets"]["ok"] == "n[01,03-04,06]"
    for args, why in ((("--fleet", str(tmp_path / "nope")), "is not a directory"),
                      (("--fleet", str(tmp_path / "f"), "--hosts", "a[1-2]"), "one fleet"),
                      (("--fleet", str(tmp_path / "f"), "--root", "/tmp"), "--remote-root")):
        done = cli("ask", "Which driver?", *args, "-q", "--trace", str(tmp_path / "x.jsonl"))
        assert done.returncode == 2 and why in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


def test_one_host_imports_no_engine_library(tmp_path: Path) -> None:
    root = str(REPO / "examples/hopper-deepseek")
    code = ("import sys; from agentkit.cli import main; "
            f"rc = main(['ask', 'Which driver?', '--root', {root!r},"
            f" '-q', '--json', '--trace', {str(tmp_path / 't.jsonl')!r}]); "
            "heavy = sorted(m for m in ('asyncssh', 'ClusterShell', 'ray') if m in sys.modules); "
            "print('HEAVY', heavy, rc, file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert "HEAVY [] 0" in done.stderr, done.stderr


def test_snapshots_taken_into_a_fleet_directory_are_asked_as_one_fleet(tmp_path: Path) -> None:
    fleet_dir = tmp_path / "fleet"
    for name, example in (("hopper01", "hopper-deepseek"), ("kimi01", "blackwell-kimi")):
        done = cli("snapshot", "--fleet", str(fleet_dir), "--host", name, "--root",
                   str(REPO / "examples" / example))
        assert done.returncode == 0, done.stderr
        manifest = json.loads((fleet_dir / name / ".agentkit/snapshot.json").read_text())
        assert manifest["host"] == name
    done = cli("ask", "Which GPUs and driver?", "--fleet", str(fleet_dir), "--json", "-q",
               "--trace", str(tmp_path / "t.jsonl"))
    assert done.returncode == 0, done.stderr  # both hosts answered
    fleet = json.loads(done.stdout)["fleet"]
    # a Hopper host and a Blackwell host: one each, no majority, so both differ
    assert fleet["hosts"] == 2 and fleet["buckets"] == {"differs": "hopper01,kimi01"}
    again = cli("snapshot", "--fleet", str(fleet_dir), "--host", "kimi01", "--root",
                str(REPO / "examples/blackwell-kimi"))
    assert again.returncode == 2 and "already in the fleet" in again.stderr


def test_a_fleet_snapshot_is_named_after_this_host_unless_told(tmp_path: Path) -> None:
    import os

    name = os.uname().nodename
    done = cli("snapshot", "--fleet", str(tmp_path / "f"), "--root",
               str(REPO / "examples/hopper-deepseek"))
    try:
        check = check_name(name)
    except InventoryError:
        assert done.returncode == 2 and "give --host NAME" in done.stderr
        return
    assert done.returncode == 0, done.stderr
    assert [p.name for p in (tmp_path / "f").iterdir()] == [check]


@pytest.mark.parametrize(("args", "why"), [
    (("--fleet", "F", "--host", "a,b"), "not a plain host name"),
    (("--host", "n1", "OUT"), "give it with --fleet DIR"),
    (("OUT", "--fleet", "F"), "give a new directory OUT, or --fleet DIR"),
    ((), "give a new directory OUT, or --fleet DIR")])
def test_bad_fleet_snapshot_input_is_one_line(args: tuple[str, ...], why: str,
                                              tmp_path: Path) -> None:
    done = cli("snapshot", *(str(tmp_path / a) if a in ("F", "OUT") else a for a in args),
               "--root", str(REPO / "examples/hopper-deepseek"))
    assert done.returncode == 2 and why in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "F").exists() and not (tmp_path / "OUT").exists()
