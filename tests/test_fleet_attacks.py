"""Attacks on the fleet layer (issue 14), written by an independent reviewer. Each test's
expectation was written before running it, from SSH/asyncssh, ClusterShell and Slurm
semantics and the issue's rules (every host in exactly one bucket, an unknown key is never
connected to, remote output is untrusted, a citation names only hosts that showed it).
Tests that fail today because of a real bug are ``xfail(strict=True)`` with the bug in the
reason, so they flip when it is fixed."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from agentkit import Orchestrator
from agentkit._fleet._fold import Fold
from agentkit._fleet._inventory import config_hosts, hosts_from
from agentkit._fleet._names import InventoryError, check_name, expand, fold
from agentkit._fleet._outcome import Batch, HostOutcome
from agentkit._fleet._snapfleet import SnapshotFleet
from agentkit._fleet._wire import MAX_REPLY, outcome, request
from agentkit._fleet.worker import serve
from agentkit._sandbox._host import Host
from agentkit._trace import Trace
from agentkit._trace._read import TraceError
from agentkit._types import Answer, Evidence, Fact, TaskResult
from benchmarks._fleet_hosts import DRIVER, make_fleet, write_host

from .conftest import REPO

QUESTION, TASKS = "Which driver?", ["gpu-inventory"]


# ---------------------------------------------------------------- helpers


def buckets(answer: Answer) -> dict[str, set[str]]:
    assert answer.fleet is not None
    return {b: set(expand(n)) for b, n in answer.fleet.buckets.items()}


def one_in_each(answer: Answer, hosts: Sequence[str]) -> None:
    """Every host asked for in exactly one bucket, and the counts add up."""
    assert answer.fleet is not None
    seen = [h for hs in buckets(answer).values() for h in hs]
    assert sorted(seen) == sorted(hosts)
    assert sum(answer.fleet.counts.values()) == len(hosts) == answer.fleet.hosts


class Canned:
    """A transport whose hosts reply with the given worker bytes (through the real wire
    parser, as SSH and Slurm do)."""

    name = "canned"

    def __init__(self, replies: dict[str, bytes]) -> None:
        self.replies = replies
        self.asked: list[str] | None = None

    async def discover(self) -> list[str]:
        return list(self.replies)

    async def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        self.asked = list(hosts)
        for h in hosts:
            yield outcome(h, self.replies[h], b"", 0, 0.01)


@pytest.fixture(scope="module")
def good_reply(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real worker's reply for gpu-inventory on a generated host."""
    root = tmp_path_factory.mktemp("reply")
    make_fleet(root, 1, width=3)
    plan = Orchestrator.catalog(Host.at("/")).plan_from_catalog(QUESTION, TASKS)
    batch = Batch(question=QUESTION, tasks=plan.tasks)
    return anyio.run(serve, request(batch, "n001"), str(root / "n001"))


def edited(reply: bytes, edit: Any) -> bytes:
    body = json.loads(reply)
    edit(body)
    return json.dumps(body).encode()  # json, not orjson: orjson cannot write what we test


def ask(transport: Any, hosts: Sequence[str] | None = None, **kw: Any) -> Answer:
    orch = Orchestrator.fleet(transport, hosts=hosts, **kw)
    return anyio.run(lambda: orch.investigate(QUESTION, tasks=TASKS))


# ---------------------------------------------------------------- host names

TRICKY = [["gpu1", "gpu01"], ["gpu007", "gpu7", "gpu07"], ["a", "a1", "a01"], ["1", "01", "001"],
          ["r1n1", "r1n2", "r2n1", "r02n1"], ["node1.c1", "node2.c1", "node1.c2"],
          ["x-1", "x-01", "x-10"], ["gpu9", "gpu10", "gpu09"], ["n0", "n00", "n000"],
          ["A1", "a1"], ["10.0.0.1", "10.0.0.2"], ["n" + "9" * 30, "n" + "9" * 29 + "8"],
          ["gpu0", "gpu-0"], ["abc123def456", "abc123def457", "abc124def456"]]


@pytest.mark.parametrize("names", TRICKY, ids=lambda n: ",".join(n)[:30])
def test_a_folded_range_names_exactly_the_original_hosts(names: list[str]) -> None:
    folded = fold(names)
    back = expand(folded)
    assert sorted(back) == sorted(names) and len(back) == len(set(back))


@pytest.mark.parametrize("bad", ["h,1", "gpu[01-03]", "@group", "^file", "!x", "a b", "é",
                                 "x" * 300, "a.", "a-", "-oProxyCommand=sh", ".a", "a:22",
                                 "a/b", "..", "a&b", "a^b", "\n"])
def test_names_nodeset_or_ssh_would_read_specially_are_refused(bad: str) -> None:
    with pytest.raises(InventoryError):
        check_name(bad)


@pytest.mark.parametrize("spec", ["gpu[3-1]", "gpu[01-1000000]", "gpu[a-b]", "gpu[01-03",
                                  "", "  ", "a,,b", "gpu[1-100001]", "n[1-99999]x[1-99999]",
                                  "@hosts", "gpu[1-3],-x", "x[1-2]-"])
def test_bad_ranges_are_inventory_errors(spec: str) -> None:
    with pytest.raises(InventoryError):
        hosts_from(spec)


def test_duplicates_and_mixed_padding_stay_distinct_hosts() -> None:
    assert hosts_from("gpu[01-02],gpu01,gpu1") in (["gpu1", "gpu01", "gpu02"],
                                                   ["gpu01", "gpu02", "gpu1"])


def test_ssh_config_host_lines_as_ssh_config_5_writes_them(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg"
    cfg.write_text('Host\tgpu01\nHost = gpu02\nHost "gpu03"\n  HostName 127.0.0.1\n')
    assert config_hosts(str(cfg)) == ["gpu01", "gpu02", "gpu03"]


# ---------------------------------------------------------------- snapshot fleet directories


def test_snapshot_fleet_directory_edges(tmp_path: Path) -> None:
    make_fleet(tmp_path / "f", 2, width=2)
    (tmp_path / "f" / "afile").write_text("not a host")  # a file: not a host
    (tmp_path / "f" / ".hidden").mkdir()  # dot directories: not hosts
    outside = write_host(tmp_path / "elsewhere", "n09")
    os.symlink(outside, tmp_path / "f" / "n03")  # a link to a snapshot elsewhere: a host
    assert anyio.run(SnapshotFleet(tmp_path / "f").discover) == ["n01", "n02", "n03"]
    answer = ask(SnapshotFleet(tmp_path / "f"))
    one_in_each(answer, ["n01", "n02", "n03"])
    # a host asked for by name whose directory is not there is unreachable, not skipped
    answer = ask(SnapshotFleet(tmp_path / "f"), hosts=["n01", "n07"])
    assert buckets(answer) == {"ok": {"n01"}, "unreachable": {"n07"}}
    (tmp_path / "empty").mkdir()
    with pytest.raises(InventoryError):
        anyio.run(SnapshotFleet(tmp_path / "empty").discover)
    with pytest.raises(InventoryError):
        SnapshotFleet(tmp_path / "f" / "afile")


def test_a_dangling_host_link_is_bucketed_not_dropped(tmp_path: Path) -> None:
    make_fleet(tmp_path / "f", 2, width=2)
    os.symlink(tmp_path / "gone", tmp_path / "f" / "n03")
    answer = ask(SnapshotFleet(tmp_path / "f"))
    one_in_each(answer, ["n01", "n02", "n03"])


# ---------------------------------------------------------------- hostile worker replies


def test_broken_replies_are_failed_hosts_not_a_broken_run(good_reply: bytes) -> None:
    deep_json = b'{"protocol":1,"results":' + b"[" * 5000 + b"]" * 5000 + b"}"
    replies = {"ok1": good_reply, "ok2": good_reply,
               "notjson": b"Traceback (most recent call last):\n",
               "huge": b" " * (MAX_REPLY + 1),
               "deepjson": deep_json,
               "otherproto": good_reply.replace(b'"protocol":1', b'"protocol":2'),
               "extra": edited(good_reply, lambda b: b["results"][0].update(extra=1)),
               "said-no": b'{"protocol":1,"error":"' + b"\x1b[2J" * 10 + b'","results":[]}',
               "empty": b""}
    answer = ask(Canned(replies))
    one_in_each(answer, list(replies))
    got = buckets(answer)
    assert got["ok"] == {"ok1", "ok2"}
    assert got["failed"] == set(replies) - {"ok1", "ok2"}


def test_a_reply_claiming_another_hosts_name_is_still_this_hosts(good_reply: bytes) -> None:
    def claim(b: dict[str, Any]) -> None:
        b["host"] = "ok1"
        for ev in b["results"][0]["evidence"]:
            ev["host"] = "ok1"
    other = edited(good_reply.replace(DRIVER.encode(), b"999.99.99"), claim)
    answer = ask(Canned({"ok1": good_reply, "ok2": good_reply, "liar": other}))
    assert buckets(answer) == {"ok": {"ok1", "ok2"}, "differs": {"liar"}}
    assert answer.fleet is not None
    driver = next(f for f in answer.fleet.facts if f.fact == "driver")
    cites = {c.id: c for c in answer.citations}
    assert [cites[i].host for i in driver.groups[1].evidence] == ["liar"]
    assert all("999.99.99" not in cites[i].excerpt for i in driver.groups[0].evidence)


def test_one_deeply_nested_reply_does_not_sink_the_fleet(good_reply: bytes,
                                                         tmp_path: Path) -> None:
    def nest(b: dict[str, Any]) -> None:
        v: Any = 1
        for _ in range(300):
            v = [v]
        b["results"][0]["facts"]["driver"]["value"] = v
    replies = {"ok1": good_reply, "ok2": good_reply, "deep": edited(good_reply, nest)}
    answer = ask(Canned(replies), trace=Trace(tmp_path / "t.jsonl"))
    one_in_each(answer, list(replies))
    assert buckets(answer)["ok"] == {"ok1", "ok2"}


def test_a_host_is_counted_once_per_fact_even_if_its_reply_repeats_a_task(
        good_reply: bytes) -> None:
    def twice(b: dict[str, Any]) -> None:
        r = json.loads(json.dumps(b["results"][0]))
        r["facts"]["driver"]["value"] = {"driver_version": "fake"}
        b["results"].append(r)
    answer = ask(Canned({"ok1": good_reply, "ok2": good_reply,
                         "dup": edited(good_reply, twice)}))
    assert answer.fleet is not None
    for f in answer.fleet.facts:
        hosts = [h for g in f.groups for h in expand(g.nodes)]
        assert len(hosts) == len(set(hosts)) <= 3, (f.fact, [g.nodes for g in f.groups])


def test_results_for_tasks_not_asked_are_not_folded(good_reply: bytes) -> None:
    def extra(b: dict[str, Any]) -> None:
        r = json.loads(json.dumps(b["results"][0]))
        r["task_id"] = "not-asked"
        b["results"].append(r)
    answer = ask(Canned({"ok1": good_reply, "ok2": good_reply,
                         "x": edited(good_reply, extra)}))
    assert answer.fleet is not None
    assert {f.task for f in answer.fleet.facts} == {"gpu-inventory"}


# ---------------------------------------------------------------- the fold


def _host(value: Any, evidence: Sequence[Evidence] = (), cites: Sequence[str] = (),
          **facts: Any) -> list[TaskResult]:
    all_facts = {"k": Fact(value=value, evidence=list(cites))}
    all_facts |= {n: Fact(value=v[0], evidence=list(v[1])) for n, v in facts.items()}
    return [TaskResult(task_id="t", status="ok", summary="", facts=all_facts,
                       evidence=list(evidence))]


def fold_of(per_host: dict[str, list[TaskResult]]) -> Fold:
    f = Fold("test", list(per_host))
    for h, results in per_host.items():
        f.add(HostOutcome(host=h, status="ok", results=results))
    return f


def groups_of(f: Fold, fact: str = "k") -> list[tuple[set[str], Any]]:
    fleet = f.fleet()
    ff = next(x for x in fleet.facts if x.fact == fact)
    return [(set(expand(g.nodes)), g.value) for g in ff.groups]


def test_fold_equalities_that_hold() -> None:
    # -0.0 and 0.0: one JSON number, as 1 and 1.0 are (RFC 8785 writes both as 0)
    same = [({"x": 1, "y": 2}, {"y": 2, "x": 1}), ((1, 2), [1, 2]), (-0.0, 0.0)]
    for a, b in same:
        assert len(groups_of(fold_of({"a": _host(a), "b": _host(b)}))) == 1
    different = [(True, 1), ("1", 1), ("café", "cafe\u0301"), (None, "null")]
    for a, b in different:
        assert len(groups_of(fold_of({"a": _host(a), "b": _host(b), "c": _host(b)}))) == 2


def test_numbers_equal_as_json_are_one_value() -> None:
    assert len(groups_of(fold_of({"a": _host(1), "b": _host(1.0), "c": _host(1)}))) == 1


def test_nan_is_not_null() -> None:
    assert len(groups_of(fold_of({"a": _host(float("nan")), "b": _host(None),
                                  "c": _host(None)}))) == 2


def test_one_host_and_all_failed_and_a_tie() -> None:
    one = fold_of({"solo": _host(1)}).fleet()
    assert one.counts["ok"] == 1 and one.hosts == 1
    f = Fold("test", ["a", "b"])
    f.add(HostOutcome(host="a", status="failed", error="x"))
    f.add(HostOutcome(host="b", status="ok", results=[]))  # answered, no results: failed
    assert f.fleet().counts["failed"] == 2
    tie = fold_of({"a": _host(1), "b": _host(1), "c": _host(2), "d": _host(2)}).fleet()
    assert tie.counts["differs"] == 4 and tie.counts["ok"] == 0


def test_a_group_citation_names_only_the_hosts_that_showed_it() -> None:
    ev = Evidence.of("file", "/etc/x.conf:1", "FOO=1", "FOO=1")
    f = fold_of({"a": _host(1, [ev], [ev.id]), "b": _host(1), "c": _host(2)})
    fleet = f.fleet()
    index = f.evidence()
    k = next(x for x in fleet.facts if x.fact == "k")
    for i in k.groups[0].evidence:
        assert set(expand(index[i].host or "")) == {"a"}


def test_a_citation_id_is_not_shared_by_groups_that_saw_different_content() -> None:
    ya = Evidence.of("file", "/etc/y:1", "Y=a", "Y=a")
    yb = Evidence.of("file", "/etc/y:1", "Y=b", "Y=b")
    f = fold_of({"a": _host(1, [ya], [ya.id], other=(2, [ya.id])),
                 "b": _host(1, [yb], [yb.id], other=(2, []))})
    fleet = f.fleet()
    index = f.evidence()
    k = next(x for x in fleet.facts if x.fact == "k")
    [cid] = k.groups[0].evidence
    assert index[cid].excerpt not in ("Y=a", "Y=b")  # a and b saw different lines


def test_outlier_evidence_is_the_outliers_own(tmp_path: Path) -> None:
    make_fleet(tmp_path / "f", 5, outliers=[2, 4], width=1)
    answer = ask(SnapshotFleet(tmp_path / "f"))
    assert answer.fleet is not None
    driver = next(f for f in answer.fleet.facts if f.fact == "driver")
    cites = {c.id: c for c in answer.citations}
    assert driver.groups[1].nodes == "n[2,4]"
    assert all(cites[i].host == "n[2,4]" for i in driver.groups[1].evidence)
    assert any("575.51.03" in cites[i].excerpt for i in driver.groups[1].evidence)
    assert not any("575.51.03" in cites[i].excerpt for i in driver.groups[0].evidence)


def test_a_differs_claim_shows_values_that_read_differently(tmp_path: Path) -> None:
    make_fleet(tmp_path / "f", 3, width=2)
    write_host(tmp_path / "f", "n04", driver="570.133.20")
    answer = ask(SnapshotFleet(tmp_path / "f"))
    claim = next(c.text for c in answer.bottom_line if c.text.startswith("driver: "))
    assert claim == "driver: 570.172.08 on 3 hosts (n[01-03]); 570.133.20 on n04."


# ---------------------------------------------------------------- transports that misbehave


class Scripted:
    name = "scripted"

    def __init__(self, found: list[str], script: Any) -> None:
        self.found, self.script, self.asked = found, script, None

    async def discover(self) -> list[str]:
        return list(self.found)

    async def run(self, hosts: Sequence[str], batch: Batch) -> AsyncIterator[HostOutcome]:
        self.asked = list(hosts)
        async for o in self.script(hosts):
            yield o


async def _down(hosts: Sequence[str]) -> AsyncIterator[HostOutcome]:
    for h in hosts:
        yield HostOutcome(host=h, status="unreachable", error="down")


async def _raise_midway(hosts: Sequence[str]) -> AsyncIterator[HostOutcome]:
    yield HostOutcome(host=hosts[0], status="unreachable", error="down")
    raise RuntimeError("transport bug")


def test_an_empty_host_list_is_not_every_host() -> None:
    t = Scripted(["d1", "d2"], _down)
    try:
        answer = ask(t, hosts=[])
    except InventoryError:
        return  # refusing is fine too
    assert t.asked == [] and answer.fleet is not None and answer.fleet.hosts == 0


def test_a_discovered_host_named_twice_is_one_host() -> None:
    t = Scripted(["a", "a", "b"], _down)
    answer = ask(t)
    one_in_each(answer, ["a", "b"])


def test_a_transport_that_raises_midway_still_buckets_every_host() -> None:
    answer = ask(Scripted(["a", "b", "c"], _raise_midway))
    one_in_each(answer, ["a", "b", "c"])
    assert buckets(answer)["unreachable"] == {"a"}


# ---------------------------------------------------------------- SSH

pytest.importorskip("asyncssh")

from benchmarks._ssh_servers import CLIENT_OPTIONS  # noqa: E402

from ._fleet_attack_servers import Servers, serving, sleep_forever, start  # noqa: E402


def ssh_ask(tmp: Path, scripts: dict[str, Any], *, unknown: frozenset[str] = frozenset(),
            config_head: str = "", known_hosts: str | bool | None = True,
            password: str | None = None, timeout: float = 6.0,
            ) -> tuple[Answer, Servers]:
    from agentkit._fleet._ssh import SSHTransport

    async def go() -> tuple[Answer, Servers]:
        srv = await start(scripts, tmp, unknown=unknown, password=password)
        cfg = tmp / "cfg"
        cfg.write_text(config_head + srv.config.read_text())
        kh = str(srv.known_hosts) if known_hosts is True else known_hosts or None
        try:
            t = SSHTransport(config=str(cfg), known_hosts=kh, options=CLIENT_OPTIONS,
                             connect_timeout_s=timeout, host_timeout_s=timeout)
            answer = await Orchestrator.fleet(t, hosts=list(scripts)).investigate(
                QUESTION, tasks=TASKS)
            await anyio.sleep(0.3)  # let the servers see the closes
            return answer, srv
        finally:
            srv.close()

    return anyio.run(go)


@pytest.fixture
def trees(tmp_path: Path) -> dict[str, Path]:
    names = make_fleet(tmp_path / "f", 3, width=3)
    return {h: tmp_path / "f" / h for h in names}


@pytest.mark.parametrize("head", ["Host *\n  StrictHostKeyChecking no\n",
                                  "Host *\n  UserKnownHostsFile /dev/null\n",
                                  "Host *\n  UserKnownHostsFile none\n"])
@pytest.mark.parametrize("with_known_hosts", [True, False])
def test_ssh_config_cannot_turn_host_key_checking_off(
        tmp_path: Path, trees: dict[str, Path], head: str, with_known_hosts: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.ssh/known_hosts of the tester's
    scripts = {h: serving(t) for h, t in trees.items()}
    try:
        answer, _ = ssh_ask(tmp_path, scripts, unknown=frozenset({"n001"}), config_head=head,
                            known_hosts=with_known_hosts)
    except InventoryError as exc:  # no known_hosts file at all: nothing is connected to
        assert not with_known_hosts and "known_hosts" in str(exc)
        return
    assert "n001" in buckets(answer)["unknown-key"] and "n001" not in buckets(answer).get("ok", ())


def test_user_known_hosts_file_none_does_not_disable_host_key_checking(
        tmp_path: Path, trees: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    # asyncssh reads UserKnownHostsFile from the config when known_hosts is left unset, and
    # `none` there means no check: the transport must always pass the files itself.
    monkeypatch.setenv("HOME", str(tmp_path))
    scripts = {h: serving(t) for h, t in trees.items()}
    try:
        answer, _ = ssh_ask(tmp_path, scripts, unknown=frozenset({"n001"}),
                            config_head="Host *\n  UserKnownHostsFile none\n",
                            known_hosts=False)
    except InventoryError:
        return  # no known_hosts file here: refused before any connection
    assert "n001" in buckets(answer).get("unknown-key", set())
    assert "n001" not in buckets(answer).get("ok", set())


def test_a_missing_known_hosts_file_is_not_unreachable(
        tmp_path: Path, trees: dict[str, Path]) -> None:
    scripts = {h: serving(t) for h, t in trees.items()}
    try:
        answer, _ = ssh_ask(tmp_path, scripts, known_hosts=str(tmp_path / "no_such_file"))
    except InventoryError:
        return
    assert buckets(answer) == {"unknown-key": set(trees)}


def test_a_stderr_flood_before_the_reply_does_not_stall_the_host(
        tmp_path: Path, trees: dict[str, Path]) -> None:
    async def flood(process: Any) -> None:
        process.stderr.write(b"w" * 4_000_000)

    scripts = {h: serving(t, before=flood if h == "n001" else None) for h, t in trees.items()}
    answer, _ = ssh_ask(tmp_path, scripts, timeout=6.0)
    assert buckets(answer) == {"ok": set(trees)}


def test_ssh_replies_that_misbehave_land_in_their_buckets_and_close(
        tmp_path: Path, trees: dict[str, Path]) -> None:
    n1, n2, n3 = sorted(trees)

    async def never_closes(process: Any) -> None:  # a valid reply, then no EOF, ever
        data = await process.stdin.read()
        process.stdout.write(await serve(data, root=str(trees[n1])))
        await asyncio.sleep(3600)

    async def nonzero(process: Any) -> None:  # a valid reply and a non-zero exit
        data = await process.stdin.read()
        process.stdout.write(await serve(data, root=str(trees[n2])))
        process.exit(3)

    async def over_cap(process: Any) -> None:
        await process.stdin.read()
        for _ in range(MAX_REPLY // (1 << 20) + 2):
            process.stdout.write(b" " * (1 << 20))
            await process.stdout.drain()
        process.exit(0)

    scripts = {n1: never_closes, n2: nonzero, n3: over_cap, "n004": sleep_forever}
    answer, srv = ssh_ask(tmp_path, scripts, timeout=5.0)
    assert buckets(answer) == {"timed-out": {n1, "n004"}, "ok": {n2}, "failed": {n3}}
    assert srv.channels_open == [0] and srv.connections_open == [0]


def test_ssh_auth_failure_is_failed_not_unreachable(tmp_path: Path,
                                                    trees: dict[str, Path]) -> None:
    scripts = {h: serving(t) for h, t in trees.items()}
    answer, _ = ssh_ask(tmp_path, scripts, password="secret")
    assert buckets(answer) == {"failed": set(trees)}
    assert answer.fleet is not None and "login refused" in answer.fleet.problems[0].error


# ---------------------------------------------------------------- Slurm


def test_an_srun_that_refuses_the_step_says_why(tmp_path: Path) -> None:
    from agentkit._fleet._slurm import SlurmTransport

    srun = tmp_path / "srun"
    srun.write_text("#!/bin/sh\necho 'srun: error: Unable to create step for job 42: "
                    "Job/step already completing or completed' >&2\nexit 1\n")
    srun.chmod(0o755)
    t = SlurmTransport("42", srun=str(srun), host_timeout_s=20)
    answer = ask(t, hosts=["node1", "node2", "node3"])
    assert buckets(answer) == {"failed": {"node1", "node2", "node3"}}
    assert answer.fleet is not None
    assert all("Unable to create step" in p.error for p in answer.fleet.problems)


# ---------------------------------------------------------------- replay


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, list[str]]:
    make_fleet(tmp_path / "f", 6, outliers=[2], broken=[5], width=2)
    trace = tmp_path / "t.jsonl"
    ask(SnapshotFleet(tmp_path / "f"), trace=Trace(trace))
    return trace, trace.read_text().splitlines()


def _host_lines(lines: list[str]) -> list[int]:
    return [i for i, ln in enumerate(lines) if json.loads(ln).get("kind") == "host"]


def test_a_trace_cut_mid_run_replays_with_the_rest_failed(
        recorded: tuple[Path, list[str]], tmp_path: Path) -> None:
    from agentkit._replay import replay_trace

    _, lines = recorded
    idx = _host_lines(lines)
    cut = tmp_path / "cut.jsonl"
    cut.write_text("\n".join(lines[: idx[2] + 1]) + "\n" + lines[idx[3]][:25])
    result = anyio.run(replay_trace, cut)
    assert result.answer is not None and not result.identical
    one_in_each(result.answer, [f"n0{i}" for i in range(1, 7)])


def test_replay_ignores_a_host_the_run_never_asked(recorded: tuple[Path, list[str]],
                                                   tmp_path: Path) -> None:
    from agentkit._replay import replay_trace

    _, lines = recorded
    idx = _host_lines(lines)
    ev = json.loads(lines[idx[0]])
    ev["data"]["host"] = "n99"
    bad = tmp_path / "intruder.jsonl"
    bad.write_text("\n".join([*lines[: idx[-1] + 1], json.dumps(ev), *lines[idx[-1] + 1:]]))
    result = anyio.run(replay_trace, bad)
    assert result.answer is not None
    one_in_each(result.answer, [f"n0{i}" for i in range(1, 7)])


def test_replay_of_a_tampered_host_name_is_a_trace_error(recorded: tuple[Path, list[str]],
                                                         tmp_path: Path) -> None:
    from agentkit._replay import replay_trace

    _, lines = recorded
    idx = _host_lines(lines)
    ev = json.loads(lines[idx[0]])
    ev["data"]["host"] = "h,1"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines[: idx[-1] + 1], json.dumps(ev), *lines[idx[-1] + 1:]]))
    with pytest.raises(TraceError):
        anyio.run(replay_trace, bad)


# ---------------------------------------------------------------- CLI


def cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", "ask", QUESTION, *args, "-q",
                           "--trace", str(home / f"t{len(list(home.iterdir()))}.jsonl")],
                          capture_output=True, text=True, timeout=180, cwd=REPO,
                          env={**os.environ, "HOME": str(home)})


def test_cli_bad_fleet_input_is_one_line_exit_2_and_no_answer_is_exit_7(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    make_fleet(tmp_path / "broken", 3, broken=[1, 2, 3], width=2)
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("")
    cases = [("--hosts", "gpu[01-"), ("--hosts", "gpu[1-200000]"),
             ("--hosts", "@" + str(tmp_path / "nope")), ("--fleet", str(tmp_path / "afile")),
             ("--fleet", str(tmp_path / "empty")),
             ("--fleet", str(tmp_path / "empty"), "--slurm-job", "42"),
             ("--slurm-job", "42;rm -rf /"), ("--fleet", str(tmp_path / "broken"),
                                               "--fleet-concurrency", "0")]
    for args in cases:
        done = cli(*args, home=home)
        assert done.returncode == 2, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, (args, done.stderr)
    done = cli("--fleet", str(tmp_path / "broken"), home=home)
    assert done.returncode == 7 and "failed=3" in done.stderr


def test_cli_ray_without_a_cluster_is_one_line(tmp_path: Path) -> None:
    pytest.importorskip("ray")
    done = cli("--ray", "auto", home=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_bad_reply_bytes_do_not_reach_the_fleet_record() -> None:
    # the wire parser, alone: a reply is believed only after validation
    assert outcome("h", b"\xff\xfe", b"", 0, 0).status == "failed"
    assert outcome("h", orjson.dumps({"protocol": 1, "results": [{"task_id": 1}]}), b"", 0,
                   0).status == "failed"
