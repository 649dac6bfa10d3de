"""The Slurm transport's own logic, called directly with small real programs in place of
``scontrol`` and ``srun`` (sh scripts, milliseconds each): what is expected follows Slurm's
manual (a job id is digits, or ``ARRAYJOB_TASK`` for an array task; ``scontrol show job
--oneliner`` prints the job's Key=Value fields on one line, ``NodeList`` among them and
``ReqNodeList``/``ExcNodeList`` beside it; ``scontrol show node`` gives each node's
``State=`` as a base state joined by ``+`` to its flags) and docs/fleet.md (one ``srun
--overlap`` step per node; a step past ``--host-timeout`` is timed out and killed; a step
srun refuses is a failed host with srun's reason).

These are the first tests of the ``fleet-slurm`` mutation target: the frozen-node tests of
``test_fleet_slurm.py`` wait out a host timeout and start the real worker, seconds a mutant.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import anyio
import pytest

from agentkit._fleet import _slurm
from agentkit._fleet._names import InventoryError
from agentkit._fleet._outcome import Batch, HostOutcome
from agentkit._fleet._slurm import DEFAULT_COMMAND, SlurmTransport, _talk
from agentkit._fleet._wire import request

REPLY = '{"protocol":1,"agentkit":"t","error":"","results":[]}'

# a step's process left unclosed (its pipes) is only an "Event loop is closed" warning at
# exit: an error here, so the transport's cleanup is checked by every test of this file
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


def prog(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def fake_srun(tmp: Path) -> str:
    """srun as the step sees it: options logged one a line, then the command exec'd."""
    log = tmp / "srun.args"
    return prog(tmp / "srun", f"""for a; do case "$a" in -*) echo "$a" >> {log}; shift;;
*) break;; esac; done
exec "$@"
""")


def fake_scontrol(tmp: Path, job: str, node: str = "", code: int = 0,
                  names: str = "") -> str:
    """scontrol answering `show job` with ``job``, `show hostnames` with ``names`` (else the
    list split at its commas), `show node` with ``node`` (exit ``code``); argv logged."""
    (tmp / "job.txt").write_text(job)
    (tmp / "names.txt").write_text(names)
    (tmp / "node.txt").write_text(node)
    log = tmp / "scontrol.args"
    return prog(tmp / "scontrol", f"""echo "$*" >> {log}
case "$2" in
  job) cat {tmp}/job.txt;;
  hostnames) if [ -s {tmp}/names.txt ]; then cat {tmp}/names.txt
             else echo "$3" | tr ',' '\\n'; fi;;
  node) cat {tmp}/node.txt; exit {code};;
esac
""")


def one(t: SlurmTransport, host: str, batch: Batch | None = None) -> HostOutcome:
    async def go() -> HostOutcome:
        with anyio.fail_after(30):  # a mutant that never stops the step fails, not hangs
            return await t._one(host, batch or Batch(question="q", tasks=[]))
    return anyio.run(go)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def microseconds(wall_s: float) -> bool:
    """A wall time as every transport records it: seconds to the microsecond (a float that
    is a whole number of seconds would be one rounded to the second)."""
    return round(wall_s, 6) == wall_s and wall_s != round(wall_s)


def test_job_ids_as_slurm_writes_them_and_the_documented_defaults() -> None:
    for job in ("4242", "4242_7", "1"):
        assert SlurmTransport(job).job == job
    for bad in ("", "42_", "_7", "42a", "42 ", "4242_7_1", "42\n", "-1", "42;id"):
        with pytest.raises(InventoryError, match=r"is not a job id \(digits, or ARRAYJOB_TASK\); "
                           "see squeue --me$"):
            SlurmTransport(bad)
    t = SlurmTransport("42")  # the CLI's defaults (--host-timeout 300, --concurrency 32)
    assert (t.scontrol, t.srun, t.root, t.remote_command) == ("scontrol", "srun", "/",
                                                               DEFAULT_COMMAND)
    assert (t.concurrency, t.host_timeout_s, t.states, t.name) == (32, 300.0, {}, "slurm")
    assert DEFAULT_COMMAND == "python3 -m agentkit._fleet.worker"
    t = SlurmTransport("42", concurrency=3, host_timeout_s=7.5, root="/f/{host}")
    assert (t.concurrency, t.host_timeout_s, t.root) == (3, 7.5, "/f/{host}")


def test_a_step_is_one_overlapping_task_on_exactly_the_named_node() -> None:
    t = SlurmTransport("4242_7", srun="/opt/slurm/bin/srun",
                       remote_command="env 'A=x y' python3 -m agentkit._fleet.worker")
    assert t.step("gpu07") == ["/opt/slurm/bin/srun", "--jobid=4242_7", "--overlap",
                               "--nodelist=gpu07", "--nodes=1", "--ntasks=1", "--quiet",
                               "env", "A=x y", "python3", "-m", "agentkit._fleet.worker"]
    assert SlurmTransport("1").step("n")[-3:] == shlex.split(DEFAULT_COMMAND)[-3:]


def test_discover_reads_the_nodelist_not_the_requested_one(tmp_path: Path) -> None:
    job = ("JobId=7 JobName=serve ReqNodeList=gpu9 ExcNodeList=gpu8 "
           "NodeList=gpu[1-2],gpu5 BatchHost=gpu1 JobState=RUNNING NumNodes=3\n")
    nodes = ("NodeName=gpu1 Arch=x86_64 State=IDLE NextState=DRAIN Partitions=p\n"
             "NodeName=gpu2 State=MIXED+DRAIN Partitions=p\n"
             "NodeName=gpu5 State=DOWN+NOT_RESPONDING Partitions=p\n")
    t = SlurmTransport("7", scontrol=fake_scontrol(tmp_path, job, nodes,
                                                   names="gpu1\ngpu2\ngpu5\n"))
    assert anyio.run(t.discover) == ["gpu1", "gpu2", "gpu5"]
    assert (tmp_path / "scontrol.args").read_text().splitlines() == [
        "show job --oneliner 7", "show hostnames gpu[1-2],gpu5",
        "show node --oneliner gpu[1-2],gpu5"]
    assert t.states == {"gpu2": "MIXED+DRAIN", "gpu5": "DOWN+NOT_RESPONDING"}
    n2, n5 = t.notes()  # sorted by node
    assert n2.startswith("the transport (Slurm) lists gpu2 as MIXED+DRAIN: ")
    assert n5.startswith("the transport (Slurm) lists gpu5 as DOWN+NOT_RESPONDING: ")
    assert "Slurm schedules no new work there" in n2 and n2.endswith("what it runs now")


@pytest.mark.parametrize("state", ["IDLE+DRAIN", "ALLOCATED+DRAINING", "DRAINED", "DOWN",
                                   "IDLE+FAIL", "MIXED+FAILING", "IDLE+MAINTENANCE",
                                   "IDLE+REBOOT_REQUESTED", "ALLOCATED+REBOOT_ISSUED",
                                   "IDLE+NOT_RESPONDING"])
def test_every_state_flag_under_which_slurm_schedules_nothing_is_noted(
        tmp_path: Path, state: str) -> None:
    nodes = f"NodeName=a State={state}\nNodeName=b State=ALLOCATED+COMPLETING\n"
    t = SlurmTransport("7", scontrol=fake_scontrol(tmp_path, "NodeList=a,b\n", nodes))
    assert anyio.run(t.discover) == ["a", "b"]
    assert t.states == {"a": state}


def test_a_name_scontrol_gives_is_checked_like_any_host(tmp_path: Path) -> None:
    t = SlurmTransport("7", scontrol=fake_scontrol(tmp_path, "NodeList=-oProxyCommand=x\n"))
    with pytest.raises(InventoryError):
        anyio.run(t.discover)


@pytest.mark.parametrize(("job", "said"), [
    ("JobId=43 JobState=PENDING NodeList=(null) NumNodes=2\n", "(state PENDING)"),
    ("JobId=43 NodeList=(null)\n", "(state unknown)"),
    ("JobId=43 JobState=PENDING NodeList= NumNodes=2\n", "(state PENDING)"),
    ("JobId=43 JobState=PENDING ReqNodeList=gpu1\n", "(state PENDING)"),
    ("JobId=43 PrevJobState=RUNNING JobState=COMPLETED\n", "(state COMPLETED)")])
def test_a_job_without_nodes_says_its_state(tmp_path: Path, job: str, said: str) -> None:
    t = SlurmTransport("43", scontrol=fake_scontrol(tmp_path, job))
    with pytest.raises(InventoryError) as exc:
        anyio.run(t.discover)
    assert str(exc.value).startswith(f"Slurm job 43 has no nodes {said}: ask about a running")


def test_a_nodelist_at_the_start_of_the_line_is_read(tmp_path: Path) -> None:
    t = SlurmTransport("7", scontrol=fake_scontrol(tmp_path, "NodeList=a JobState=RUNNING\n"))
    assert anyio.run(t.discover) == ["a"]


def test_a_slurm_that_cannot_say_node_states_leaves_them_out(tmp_path: Path) -> None:
    nodes = "NodeName=a State=DOWN\n"
    t = SlurmTransport("7", scontrol=fake_scontrol(tmp_path, "NodeList=a\n", nodes, code=1))
    assert anyio.run(t.discover) == ["a"] and t.states == {} and t.notes() == []


def test_scontrol_missing_or_failing_is_an_inventory_error(tmp_path: Path) -> None:
    t = SlurmTransport("7", scontrol=str(tmp_path / "nowhere" / "scontrol"))
    with pytest.raises(InventoryError) as exc:
        anyio.run(t.discover)
    assert str(exc.value) == (f"cannot run {tmp_path}/nowhere/scontrol: No such file or "
                              "directory; run on a host with the Slurm client")
    why = "slurm_load_jobs error: Invalid job id specified " + "x" * 400
    bad = prog(tmp_path / "sc", f"printf '\\n  {why}\\377\\n' >&2\necho NodeList=a\nexit 1\n")
    with pytest.raises(InventoryError) as exc:
        anyio.run(SlurmTransport("9", scontrol=bad).discover)
    assert str(exc.value) == f"scontrol show job --oneliner 9 failed: {why[:300]}"


def test_output_that_is_not_utf8_is_read_with_replacement(tmp_path: Path) -> None:
    sc = prog(tmp_path / "sc", "printf 'NodeList=(null) JobState=PEND\\377\\n'\n")
    with pytest.raises(InventoryError, match="state PEND\ufffd"):
        anyio.run(SlurmTransport("7", scontrol=sc).discover)
    sc = prog(tmp_path / "sc2", "printf 'boom \\377' >&2; exit 2\n")
    with pytest.raises(InventoryError) as exc:
        anyio.run(SlurmTransport("7", scontrol=sc).discover)
    assert str(exc.value).endswith("failed: boom \ufffd")


def test_a_step_reads_the_hosts_batch_and_its_reply_is_the_outcome(tmp_path: Path) -> None:
    got, reply = tmp_path / "stdin", tmp_path / "reply"
    reply.write_text(REPLY)
    t = SlurmTransport("42", srun=fake_srun(tmp_path), remote_command=(
        f"sh -c 'cat > {got}; cat {reply}'"))
    batch = Batch(question="q", tasks=[], root="/f/{host}")
    o = one(t, "gpu3", batch)
    assert (o.host, o.status, o.error, o.results) == ("gpu3", "ok", "", [])
    assert 0 < o.wall_s < 5 and microseconds(o.wall_s)
    assert got.read_bytes() == request(batch, "gpu3")  # the whole batch, its root the host's
    assert (tmp_path / "srun.args").read_text().split() == [
        "--jobid=42", "--overlap", "--nodelist=gpu3", "--nodes=1", "--ntasks=1", "--quiet"]


def test_a_bad_exit_is_failed_with_its_code_and_stderr(tmp_path: Path) -> None:
    t = SlurmTransport("42", srun=fake_srun(tmp_path),
                       remote_command="sh -c 'echo agentkit: not found >&2; exit 5'")
    o = one(t, "n1")
    assert o.status == "failed" and "(exit 5: agentkit: not found)" in o.error


def test_an_srun_that_cannot_start_is_a_failed_host(tmp_path: Path) -> None:
    o = one(SlurmTransport("42", srun=str(tmp_path / "no-srun")), "n1")
    assert (o.status, o.error) == ("failed", "cannot start srun: No such file or directory")


def test_a_step_past_the_host_timeout_is_timed_out_and_killed(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    t = SlurmTransport("42", srun=fake_srun(tmp_path), host_timeout_s=0.5,
                       remote_command=f"sh -c 'echo $$ > {pid}; exec sleep 60'")
    o = one(t, "n1")
    assert (o.status, o.error) == ("timed-out", "no reply within 0.5s (step killed)")
    assert 0.5 <= o.wall_s < 10 and microseconds(o.wall_s) and gone(int(pid.read_text()))


def test_a_step_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    pid = tmp_path / "pid"  # srun forwards SIGTERM to the step; a step may ignore it
    t = SlurmTransport("42", srun=fake_srun(tmp_path), host_timeout_s=0.3,
                       remote_command=f"sh -c 'trap \"\" TERM; echo $$ > {pid}; "
                       "while :; do sleep 0.1; done'")
    assert one(t, "n1").status == "timed-out" and gone(int(pid.read_text()))


def test_a_cancelled_host_stops_its_step(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    t = SlurmTransport("42", srun=fake_srun(tmp_path), host_timeout_s=60,
                       remote_command=f"sh -c 'echo $$ > {pid}; exec sleep 60'")

    async def go() -> None:
        with anyio.move_on_after(1):  # the run's deadline, from outside the transport
            await t._one("n1", Batch(question="q", tasks=[]))

    anyio.run(go)
    assert gone(int(pid.read_text()))


def test_a_cancelled_host_kills_a_step_that_ignores_sigterm(tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    t = SlurmTransport("42", srun=fake_srun(tmp_path), host_timeout_s=60,
                       remote_command=f"sh -c 'trap \"\" TERM; echo $$ > {pid}; "
                       "while :; do sleep 0.1; done'")

    async def go() -> None:
        with anyio.move_on_after(1):  # cancelled: the stop still runs to its SIGKILL
            await t._one("n1", Batch(question="q", tasks=[]))

    anyio.run(go)
    assert gone(int(pid.read_text()))


def test_a_refused_step_that_never_reads_the_batch_says_why(tmp_path: Path) -> None:
    srun = prog(tmp_path / "srun", "echo 'srun: error: Unable to create step' >&2\nexit 1\n")
    big = Batch(question="q" * 1_000_000, tasks=[])  # past a pipe's buffer: the write fails
    o = one(SlurmTransport("42", srun=srun), "n1", big)
    assert o.status == "failed" and "(exit 1: srun: error: Unable to create step)" in o.error


def talk(argv: list[str], data: bytes = b"") -> tuple[bytes, bytes]:
    async def go() -> tuple[bytes, bytes]:
        with anyio.fail_after(30):
            proc = await anyio.open_process(argv, stdin=-1)
            async with proc:
                return await _talk(proc, data)
    return anyio.run(go)


def test_talk_sends_the_batch_and_closes_stdin() -> None:
    assert talk(["cat"], b"x" * 300_000) == (b"x" * 300_000, b"")


def test_talk_caps_stdout_one_past_the_reply_limit_and_drains_the_rest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_slurm, "MAX_REPLY", 10)
    out, err = talk(["sh", "-c", "head -c 1000000 /dev/zero; echo done >&2"])
    assert (out, err) == (b"\0" * 11, b"done\n")  # read to the end: the step could exit
    # the cap crossed by a later chunk: only what fits is kept
    out, _ = talk(["sh", "-c", "printf 12345; sleep 0.3; printf 6789abcdefghij"])
    assert out == b"123456789ab"


def test_talk_keeps_64_kib_of_stderr_and_drains_the_rest() -> None:
    out, err = talk(["sh", "-c", "head -c 1000000 /dev/zero | tr '\\0' e >&2; printf ok"])
    assert (out, err) == (b"ok", b"e" * 65536)


def test_stop_leaves_an_exited_step_alone(tmp_path: Path) -> None:
    async def go() -> int | None:
        proc = await anyio.open_process(["true"])
        await proc.wait()
        await _slurm._stop(proc)  # no signal sent to a pid that may be another's now
        return proc.returncode

    assert anyio.run(go) == 0


def test_run_covers_every_host_at_most_concurrency_at_once(tmp_path: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    (tmp_path / "reply").write_text(REPLY)
    t = SlurmTransport("42", srun=fake_srun(tmp_path), concurrency=2, remote_command=(
        f"sh -c 'touch {live}/$$; ls {live} | wc -l >> {tmp_path}/peak; sleep 0.2; "
        f"rm {live}/$$; cat {tmp_path}/reply'"))

    async def go() -> list[HostOutcome]:
        with anyio.fail_after(30):
            return [o async for o in t.run(["a", "b", "c", "d"], Batch(question="q",
                                                                       tasks=[]))]

    got = anyio.run(go)
    assert sorted((o.host, o.status) for o in got) == [(h, "ok") for h in "abcd"]
    assert max(int(n) for n in (tmp_path / "peak").read_text().split()) <= 2
