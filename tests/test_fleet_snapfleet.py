"""The snapshot fleet (``_fleet/_snapfleet.py``) called directly: hosts are the directory's
subdirectories (a link whose target is gone included: a host whose snapshot broke is asked and
fails, not dropped); each host is one outcome in exactly one bucket (docs/fleet.md's table: an
empty or unreadable snapshot directory is ``failed``, no snapshot directory is
``unreachable``); reasons are said of ``<snapshot>`` so that hosts broken alike fold into one
line; at most ``--fleet-concurrency`` hosts at once, 8 by default for snapshots (the CLI's
help). Expected values come from those promises."""

from __future__ import annotations

import os
import shutil
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from agentkit._fleet import _snapfleet, worker
from agentkit._fleet._names import InventoryError
from agentkit._fleet._outcome import Batch, HostOutcome
from agentkit._fleet._snapfleet import SnapshotFleet
from agentkit._types import TaskResult, TaskSpec

from .conftest import EXAMPLES

BATCH = Batch(question="What GPUs?", tasks=[TaskSpec(id="gpu", title="GPUs", objective="",
                                                     template="gpu-inventory")])


def _outcomes(fleet: SnapshotFleet, hosts: list[str]) -> dict[str, HostOutcome]:
    async def go() -> dict[str, HostOutcome]:
        with anyio.fail_after(60):
            return {o.host: o async for o in fleet.run(hosts, BATCH)}

    return anyio.run(go)


def _ticks(monkeypatch: pytest.MonkeyPatch, *ticks: float) -> None:
    it = iter(ticks)
    monkeypatch.setattr(_snapfleet, "time", types.SimpleNamespace(perf_counter=lambda: next(it)))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """perf_counter reads 10.0, then 12.5: the measured wall time is 2.5 s."""
    _ticks(monkeypatch, 10.0, 12.5)
    yield


# ---------------------------------------------------------------- the inventory


def test_a_fleet_directory_that_is_not_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("")
    for bad in (tmp_path / "afile", tmp_path / "nope"):
        with pytest.raises(InventoryError) as err:
            SnapshotFleet(bad)
        assert f"--fleet {str(bad)!r} is not a directory" in str(err.value)
        assert str(err.value).endswith(": give a directory with one snapshot per host "
                                       "(fleet/<host>/)")


def test_the_hosts_are_the_subdirectories_sorted_links_included(tmp_path: Path) -> None:
    for name in ("gpu10", "gpu02", ".trash"):
        (tmp_path / name).mkdir()
    (tmp_path / "notes.txt").write_text("a file is not a host")
    (tmp_path / "gpu05").symlink_to(tmp_path / "gone")  # a snapshot whose target broke
    (tmp_path / "gpu07").symlink_to(tmp_path / "gpu02")
    fleet = SnapshotFleet(tmp_path)
    assert fleet.directory == str(tmp_path)
    assert anyio.run(fleet.discover) == ["gpu02", "gpu05", "gpu07", "gpu10"]


def test_a_relative_fleet_directory_is_read_from_where_it_was_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "f" / "n1").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    fleet = SnapshotFleet("f")
    assert fleet.directory == str(tmp_path / "f")
    monkeypatch.chdir("/")
    assert anyio.run(fleet.discover) == ["n1"]


def test_a_fleet_without_hosts_says_how_to_write_one(tmp_path: Path) -> None:
    (tmp_path / ".hidden").mkdir()
    with pytest.raises(InventoryError) as err:
        anyio.run(SnapshotFleet(tmp_path).discover)
    assert str(err.value) == (f"{tmp_path} holds no host directories: write one with "
                              "`agentkit snapshot --fleet DIR --host NAME`")


def test_a_host_directory_whose_name_is_not_a_host_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "n1").mkdir()
    (tmp_path / "-oProxyCommand=sh").mkdir()
    with pytest.raises(InventoryError):
        anyio.run(SnapshotFleet(tmp_path).discover)


# ---------------------------------------------------------------- one host


def test_a_host_with_a_snapshot_answers_ok_with_its_results(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES / "blackwell-kimi", tmp_path / "n1", symlinks=True)
    [got] = _outcomes(SnapshotFleet(tmp_path), ["n1"]).values()
    assert got.host == "n1" and got.status == "ok" and got.error == ""
    assert [r.task_id for r in got.results] == ["gpu"] and got.results[0].status == "ok"
    assert got.wall_s > 0


def test_the_measured_wall_time_is_each_outcomes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clock: None) -> None:
    (tmp_path / "n1" / "x").mkdir(parents=True)
    ok = TaskResult(task_id="gpu", status="ok", summary="")

    async def fake(root: str, batch: Batch) -> tuple[list[TaskResult], str]:
        return [ok], ""

    monkeypatch.setattr(worker, "run_local", fake)
    [got] = _outcomes(SnapshotFleet(tmp_path), ["n1"]).values()
    assert got == HostOutcome(host="n1", status="ok", results=[ok], wall_s=2.5)


def test_an_empty_snapshot_fails_saying_so_of_snapshot(tmp_path: Path, clock: None) -> None:
    (tmp_path / "n1").mkdir()
    [got] = _outcomes(SnapshotFleet(tmp_path), ["n1"]).values()
    assert got.host == "n1" and got.status == "failed" and got.wall_s == 2.5
    # docs/fleet.md: "failed on gpu[120,180] (2 hosts): empty snapshot: <snapshot> holds no
    # files (…)", and the remedy
    assert got.error.startswith("empty snapshot: <snapshot> holds no files (")
    assert got.error.endswith("write it again with `agentkit snapshot`")
    assert str(tmp_path) not in got.error


def test_hosts_broken_alike_fail_with_one_reason(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for h in ("n1", "n2"):
        (tmp_path / h / ".agentkit").mkdir(parents=True)
        (tmp_path / h / ".agentkit" / "snapshot.json").write_text("{")
    _ticks(monkeypatch, 10.0, 12.5, 20.0, 22.5)
    got = _outcomes(SnapshotFleet(tmp_path, concurrency=1), ["n1", "n2"])
    assert {o.status for o in got.values()} == {"failed"}
    assert got["n1"].host == "n1" and got["n2"].host == "n2"
    assert got["n1"].error == got["n2"].error  # one line for both in the answer
    assert got["n1"].error.startswith("SnapshotError: <snapshot>/.agentkit/snapshot.json is "
                                      "not a valid snapshot manifest")
    assert str(tmp_path) not in got["n1"].error
    assert got["n1"].wall_s == got["n2"].wall_s == 2.5


def test_a_host_without_a_snapshot_directory_is_unreachable(tmp_path: Path) -> None:
    (tmp_path / "n1").mkdir()
    (tmp_path / "n2").symlink_to(tmp_path / "gone")
    got = _outcomes(SnapshotFleet(tmp_path), ["n2", "n3"])
    assert got["n2"] == HostOutcome(host="n2", status="unreachable",
                                    error=f"no snapshot directory {tmp_path / 'n2'}")
    assert got["n3"].status == "unreachable"
    assert got["n3"].error == f"no snapshot directory {tmp_path / 'n3'}"


@pytest.mark.parametrize("exc, why", [
    (PermissionError(13, "Permission denied", "/f/n1"), "Permission denied"),
    (OSError("device vanished"), "device vanished"),
])
def test_an_unreadable_snapshot_fails_saying_why_of_snapshot(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: OSError, why: str) -> None:
    (tmp_path / "n1").mkdir()

    def refuse(path: str) -> Any:
        raise exc

    # root reads any mode: the refusal a non-root controller would meet, stood in for
    monkeypatch.setattr(_snapfleet.os, "scandir", refuse)
    assert _snapfleet._empty(str(tmp_path / "n1")) == f"unreadable snapshot: <snapshot>: {why}"


def test_a_snapshot_holding_anything_is_investigated(tmp_path: Path) -> None:
    (tmp_path / "n1").mkdir()
    assert _snapfleet._empty(str(tmp_path / "n1")).startswith("empty snapshot")
    (tmp_path / "n1" / ".agentkit").mkdir()
    assert _snapfleet._empty(str(tmp_path / "n1")) == ""
    os.rmdir(tmp_path / "n1" / ".agentkit")
    (tmp_path / "n1" / "etc").write_text("")
    assert _snapfleet._empty(str(tmp_path / "n1")) == ""


# ---------------------------------------------------------------- the fleet


def _in_flight(monkeypatch: pytest.MonkeyPatch, fleet: SnapshotFleet, n: int) -> int:
    for i in range(n):
        (Path(fleet.directory) / f"n{i:02}" / "etc").mkdir(parents=True)
    now = most = 0

    async def fake(root: str, batch: Batch) -> tuple[list[TaskResult], str]:
        nonlocal now, most
        now += 1
        most = max(most, now)
        for _ in range(3):
            await anyio.sleep(0)
        now -= 1
        return [], ""

    monkeypatch.setattr(worker, "run_local", fake)
    got = _outcomes(fleet, [f"n{i:02}" for i in range(n)])
    assert len(got) == n and {o.status for o in got.values()} == {"ok"}
    return most


def test_at_most_8_hosts_at_once_by_default(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert _in_flight(monkeypatch, SnapshotFleet(tmp_path), 12) == 8


def test_at_most_the_given_concurrency_at_once(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    assert _in_flight(monkeypatch, SnapshotFleet(tmp_path, concurrency=3), 12) == 3
