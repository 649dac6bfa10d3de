"""Plain processes (``_hostmodel/runtimes/_processes.py``) called directly on a snapshot that
holds a capture of serving processes, with the servers other runtimes found already in the
model. Expected from the kernel's and systemd's semantics, written before running:

- /proc/<pid>/cmdline is the argv the process runs now, /proc/<pid>/environ the environment
  it was started with (proc(5)): both are what is in effect, whatever a unit file says since;
- systemd.service(5): ExecStart= and Environment= are used when the unit starts, so a unit
  edited since (and reloaded) declares what the process runs only after a restart;
- /proc/<pid>/stat's 4th field is the parent pid: an engine process whose parent is another
  engine process (a launcher and its workers) is the same server;
- the cgroup path names who started it (a systemd unit, a container by its id, a pod); a
  container's id in the cgroup is the full 64-hex id, Docker shows it cut to 12 or full;
- a process started by hand (a shell, tmux) runs now and nothing starts it at boot;
- /proc/<pid>/environ of another user's process is unreadable (EACCES, ptrace access mode):
  its settings are unknown, never guessed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit import Host
from agentkit._hostmodel._model import HostModel, Server, Setting
from agentkit._hostmodel._state import State
from agentkit._hostmodel.runtimes import _processes

from .runtimes_snap import cited, discover, snapshot

WHEN = "2026-11-30T10:00:00Z"
SERVE = ["vllm", "serve", "/models/m", "--tensor-parallel-size", "2"]


def proc(pid: int, argv: list[str] | None = None, **over: Any) -> dict[str, Any]:
    """One process as the capture holds it (``_sandbox/_procs.py``'s fields)."""
    base: dict[str, Any] = {"pid": pid, "ppid": 1, "argv": SERVE if argv is None else argv,
                            "cwd": None, "started_by": {}, "env": {}, "env_readable": True}
    base.update(over)
    return base


def host(tmp_path: Path, procs: list[Any] | None) -> Host:
    h = snapshot(tmp_path, {})
    if procs is not None:
        (tmp_path / ".agentkit/processes.json").write_text(json.dumps(procs))
        manifest = json.loads((tmp_path / ".agentkit/snapshot.json").read_text())
        manifest.update(processes="processes.json", captured_at=WHEN)
        (tmp_path / ".agentkit/snapshot.json").write_text(json.dumps(manifest))
        h = Host.at(tmp_path)
    return h


def unit(name: str = "vllm.service", env: dict[str, str] | None = None,
         argv: list[str] | None = None, **over: Any) -> Server:
    """A server another runtime found: a systemd unit whose file sets ``env`` at line 5."""
    s = Server(name=name, path=f"/etc/systemd/system/{name}", files=[], argv=argv or SERVE,
               argv_source=f"/etc/systemd/system/{name}", argv_line=7, argv_evidence=["u1"],
               env={k: Setting(k, v, f"/etc/systemd/system/{name}", 5, ["u2"], "unit")
                    for k, v in (env or {}).items()})
    s.flags = {"model": "/models/m", "tensor_parallel_size": "2"}
    for key, value in over.items():
        setattr(s, key, value)
    return s


def run(tmp_path: Path, procs: list[Any] | None, *known: Server
        ) -> tuple[Any, HostModel, dict[str, Server]]:
    model = HostModel()
    model.servers += known
    return discover(_processes, host(tmp_path, procs), model)


# -- what the capture says ------------------------------------------------------------------

def test_a_snapshot_without_a_capture_says_so(tmp_path: Path) -> None:
    _, model, found = run(tmp_path, None)
    assert found == {}
    assert model.looked_in == ["serving processes (not available: no capture in this "
                               "snapshot)"]


def test_a_process_started_by_hand_is_a_server_of_its_own(tmp_path: Path) -> None:
    p = proc(4242, env={"NCCL_ALGO": "Ring", "CUDA_VISIBLE_DEVICES": "0,1"}, cwd="/srv/llm")
    ctx, model, found = run(tmp_path, [p])
    assert model.looked_in == [f"serving processes (snapshot {WHEN})"]
    s = found["pid 4242"]
    assert (s.runtime, s.pid, s.path, s.container_id, s.files) == (
        "process", 4242, "/proc/4242", "", [])
    assert (s.argv, s.argv_source, s.argv_line) == (SERVE, "/proc/4242/cmdline", 0)
    assert (s.engine, s.tp, s.model_path) == ("vllm", 2, "/models/m")
    algo = s.env["NCCL_ALGO"]
    assert (algo.name, algo.value, algo.source, algo.line, algo.origin) == (
        "NCCL_ALGO", "Ring", "process 4242 environment", 0, "running process")
    assert s.env["CUDA_VISIBLE_DEVICES"].value == "0,1"
    # running now; nothing restarts it at boot
    assert (s.state.value, s.state.detail, s.state.enabled) == (
        "running", "pid 4242 is running", False)
    assert s.state.enabled_detail == ("started by hand or by a script: nothing restarts it "
                                      "at boot")
    ev = s.argv_evidence[0]
    assert s.state.evidence == algo.evidence == [ev]
    assert cited(ctx, ev)[0] == f"serving processes (snapshot {WHEN})"
    assert s.notes == ["working directory /srv/llm"]
    assert s.problems == []


@pytest.mark.parametrize("bad", [None, "vllm serve", 7, {"pid": 9}, {"pid": 9, "argv": []}])
def test_entries_without_a_command_line_are_not_servers(tmp_path: Path, bad: Any) -> None:
    # a kernel thread or a zombie has an empty cmdline: nothing it runs is read
    _, _, found = run(tmp_path, [bad, proc(10)])
    assert list(found) == ["pid 10"]


def test_an_unreadable_environment_is_unknown_never_empty(tmp_path: Path) -> None:
    p = proc(11, env={}, env_readable=False, env_error="Permission denied")
    q = proc(12, env={}, env_readable=False)  # an older capture without the error's text
    _, _, found = run(tmp_path, [p, q])
    assert found["pid 11"].notes == ["its environment could not be read (Permission denied): "
                                     "NCCL settings are unknown"]
    assert found["pid 12"].notes == ["its environment could not be read (not permitted): "
                                     "NCCL settings are unknown"]


def test_a_started_by_that_is_not_a_runtime_here_is_said(tmp_path: Path) -> None:
    # the cgroup names a unit no unit file here declares (a transient `systemd-run` one, a
    # unit in a directory not read)
    p = proc(13, started_by={"kind": "unit", "id": "run-u7.service"})
    _, _, found = run(tmp_path, [p])
    s = found["pid 13"]
    assert (s.runtime, s.container_id, s.state.value) == ("process", "", "running")
    assert s.notes == ["started from unit run-u7.service"]
    # systemd started it, not a shell: whether it comes back at boot is the unit's, unknown
    assert (s.state.enabled, s.state.enabled_detail) == (
        None, "started by the systemd unit run-u7.service, which no unit file read here "
              "declares: whether it starts at boot is unknown")


@pytest.mark.parametrize("kind", ["container", "pod"])
def test_a_process_in_a_container_no_cli_showed_keeps_its_files_apart(
        tmp_path: Path, kind: str) -> None:
    ident = "0123456789ab" if kind == "container" else "1c4a2f0e-8a0e-4b5e-9f1d-2b6c3d4e5f60"
    _, _, found = run(tmp_path, [proc(14, started_by={"kind": kind, "id": ident})])
    s = found["pid 14"]
    # its files are the image's: a restart policy no one here shows
    assert (s.runtime, s.contained, s.state.value) == ("container", True, "running")
    if kind == "container":
        assert s.container_id == ident
    assert (s.state.enabled, s.state.enabled_detail) == (None, "its restart policy is unknown")
    assert s.notes == [f"runs in {kind} {ident}, which no container CLI or manifest here "
                       "describes: its image's files are not read"]


def test_a_container_process_without_its_id_names_no_container(tmp_path: Path) -> None:
    _, _, found = run(tmp_path, [proc(17, started_by={"kind": "container"})])
    assert (found["pid 17"].runtime, found["pid 17"].container_id) == ("container", "")


def test_a_config_file_of_a_process_by_hand_is_read(tmp_path: Path) -> None:
    # vLLM `--config FILE`: the YAML's keys are its long options; the command line wins over
    # the file, the file over the defaults
    h = snapshot(tmp_path / "snap", {"etc/vllm.yaml": "tensor-parallel-size: 4\n"
                                                      "max-model-len: 8192\n"
                                                      "model: /models/other\n"})
    p = proc(18, argv=["vllm", "serve", "/models/m", "--config", "/etc/vllm.yaml"])
    (tmp_path / "snap/.agentkit/processes.json").write_text(json.dumps([p]))
    manifest = json.loads((tmp_path / "snap/.agentkit/snapshot.json").read_text())
    manifest.update(processes="processes.json", captured_at=WHEN)
    (tmp_path / "snap/.agentkit/snapshot.json").write_text(json.dumps(manifest))
    _, _, found = discover(_processes, Host.at(h.root.path))
    s = found["pid 18"]
    assert (s.tp, s.model_path, s.flags["max_model_len"]) == (4, "/models/m", "8192")


def test_a_command_that_starts_no_engine_is_not_a_server(tmp_path: Path) -> None:
    _, _, found = run(tmp_path, [proc(15, argv=["/usr/bin/python3", "train.py"]),
                                 proc(16)])
    assert list(found) == ["pid 16"]


# -- one server, several processes ----------------------------------------------------------

def test_a_launchers_workers_are_the_launchers_server(tmp_path: Path) -> None:
    # vLLM's API server forks its engine core and workers, each an engine process: their
    # parent (stat's 4th field) is in the capture, so the parent stands for all of them
    procs = [proc(20, ppid=1), proc(21, ppid=20), proc(22, ppid=21)]
    _, _, found = run(tmp_path, procs)
    assert list(found) == ["pid 20"]


def test_a_child_of_a_known_servers_process_is_that_server(tmp_path: Path) -> None:
    # the unit's main process is not in the capture (not an engine argv: a shell), its
    # engine child is
    known = unit(pid=30, state=State(value="running"))
    _, _, found = run(tmp_path, [proc(31, ppid=30)], known)
    assert found == {}
    assert known.pid == 30 and known.notes == []


def test_a_child_of_nothing_known_is_its_own_server(tmp_path: Path) -> None:
    known = unit(pid=None)  # a unit without a main pid: ppid None must not match it
    _, _, found = run(tmp_path, [proc(32, ppid=None), proc(33, ppid=77)], known)
    assert sorted(found) == ["pid 32", "pid 33"]


def test_a_pods_process_is_the_workload_the_manifests_show(tmp_path: Path) -> None:
    pod = {"kind": "pod", "id": "1c4a2f0e-8a0e-4b5e-9f1d-2b6c3d4e5f60"}
    workload = unit("deploy/vllm", runtime="kubernetes")
    _, _, found = run(tmp_path, [proc(40, started_by=pod)], unit(), workload)
    assert found == {}
    assert workload.pid is None  # not attached: a pod's uid names no workload here
    # a pod whose workload no manifest here shows: its process is a server of its own; the
    # processes after a pod's are still read
    _, _, found = run(tmp_path / "u", [proc(40, started_by=pod)], unit())
    assert list(found) == ["pid 40"] and found["pid 40"].runtime == "container"
    _, _, found = run(tmp_path / "w", [proc(40, started_by=pod), proc(41)], workload)
    assert list(found) == ["pid 41"]
    # the same process in a container: a container's process is never a pod's workload
    _, _, found = run(tmp_path / "c", [proc(40, started_by={"kind": "container",
                                                            "id": "0123456789ab"})], workload)
    assert list(found) == ["pid 40"]


# -- a process that another runtime's server runs -------------------------------------------

OWNERS = [  # (started_by, the known server's fields)
    ({"kind": "unit", "id": "vllm.service"}, {}),
    ({"kind": "container", "id": "0123456789ab"},
     {"runtime": "docker", "container_id": "0123456789ab" + "cd" * 26}),
    ({"kind": "container", "id": "0123456789ab"},
     {"runtime": "docker", "container_id": "0123456789ab"}),
    ({"kind": "container", "id": "0123456789ab" + "cd" * 26},
     {"runtime": "docker", "container_id": "0123456789ab"}),
    ({}, {"pid": 50}),  # the cgroup named no one; `systemctl show` MainPID= did
]


@pytest.mark.parametrize(("started_by", "fields"), OWNERS)
def test_the_process_of_a_known_server_is_attached_to_it(
        tmp_path: Path, started_by: dict[str, str], fields: dict[str, Any]) -> None:
    known = unit(**fields)
    ctx, _, found = run(tmp_path, [proc(50, started_by=started_by)], known)
    assert found == {}
    assert known.pid == 50 and known.notes == ["running as pid 50"]
    ev = next(iter(ctx.box.evidence))
    assert (known.state.value, known.state.detail, known.state.evidence) == (
        "running", "a process (pid 50) runs it now", [ev])


NOT_OWNERS = [  # a process none of these servers runs: it is a server of its own
    ({"kind": "unit", "id": "other.service"}, {}),
    ({"kind": "unit", "id": "vllm.service"}, {"runtime": "docker"}),  # a unit, not a container
    ({"kind": "container", "id": "vllm.service"}, {}),  # a unit's name is no container id
    ({"kind": "container", "id": "0123456789ab"},
     {"runtime": "docker", "container_id": "fedcba987654"}),
    ({"kind": "container", "id": "0123456789ab"}, {"runtime": "docker", "container_id": ""}),
    ({"kind": "unit", "id": ""}, {}),
    ({}, {"pid": 51}),
    ({}, {"pid": 50, "runtime": "docker"}),  # MainPID= is systemd's alone
]


@pytest.mark.parametrize(("started_by", "fields"), NOT_OWNERS)
def test_a_process_no_known_server_runs_is_not_attached(
        tmp_path: Path, started_by: dict[str, str], fields: dict[str, Any]) -> None:
    known = unit(**fields)
    pid_before = known.pid
    _, _, found = run(tmp_path, [proc(50, ppid=2, started_by=started_by)], known)
    assert list(found) == ["pid 50"]
    assert known.pid == pid_before and known.notes == []


def test_a_known_state_is_kept_when_its_process_is_found(tmp_path: Path) -> None:
    # the journal said it is restarting: a process seen at one instant does not undo that
    known = unit(state=State(value="crash-looping", detail="restarted 5 times",
                             evidence=["j1"]))
    run(tmp_path, [proc(60, started_by={"kind": "unit", "id": "vllm.service"})], known)
    assert (known.state.value, known.state.detail, known.state.evidence) == (
        "crash-looping", "restarted 5 times", ["j1"])
    assert known.pid == 60


# -- what is in effect: the process's environment and command line --------------------------

def test_the_running_environment_wins_and_the_difference_is_named(tmp_path: Path) -> None:
    known = unit(env={"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL", "NCCL_DEBUG": "WARN"})
    env = {"NCCL_ALGO": "Tree", "NCCL_PROTO": "LL", "NCCL_DEBUG": "WARN",
           "NCCL_IB_HCA": "mlx5_0", "CUDA_VISIBLE_DEVICES": "0"}
    ctx, _, _ = run(tmp_path, [proc(70, env=env, started_by={"kind": "unit",
                                                             "id": "vllm.service"})], known)
    ev = next(iter(ctx.box.evidence))
    drift = {d["name"]: (d["now"], d["said"]) for d in known.drift}
    # only NCCL_* are compared; equal values are not a difference
    assert drift == {"NCCL_ALGO": ("Tree", "Ring"), "NCCL_IB_HCA": ("mlx5_0", None)}
    assert {k: v.value for k, v in known.env.items()} == {
        "NCCL_ALGO": "Tree", "NCCL_PROTO": "LL", "NCCL_DEBUG": "WARN", "NCCL_IB_HCA": "mlx5_0"}
    assert known.env["NCCL_ALGO"].evidence == [ev]
    assert known.env["NCCL_PROTO"].source == "/etc/systemd/system/vllm.service"


def test_a_name_the_unit_sets_and_the_process_lacks_is_unset_now(tmp_path: Path) -> None:
    known = unit(env={"NCCL_ALGO": "Ring"})
    run(tmp_path, [proc(71, env={}, started_by={"kind": "unit", "id": "vllm.service"})],
        known)
    assert [(d["name"], d["now"]) for d in known.drift] == [("NCCL_ALGO", None)]
    assert "NCCL_ALGO" not in known.env


def test_an_unreadable_environment_leaves_the_declared_one(tmp_path: Path) -> None:
    known = unit(env={"NCCL_ALGO": "Ring"})
    p = proc(72, env={}, env_readable=False, env_error="Permission denied",
             started_by={"kind": "unit", "id": "vllm.service"})
    q = proc(73, env={}, env_readable=False, started_by={"kind": "container", "id": "ab" * 6})
    other = unit("other", runtime="docker", container_id="ab" * 32)
    run(tmp_path, [p, q], known, other)
    assert known.drift == [] and known.env["NCCL_ALGO"].value == "Ring"
    assert known.notes == ["running as pid 72", "the environment of pid 72 could not be read "
                           "(Permission denied): the declared one is used"]
    assert other.notes[-1] == ("the environment of pid 73 could not be read (not permitted): "
                               "the declared one is used")


def test_a_command_line_changed_since_the_start_is_the_processes(tmp_path: Path) -> None:
    known = unit()  # the unit file now says TP 2 on /models/m
    now = ["vllm", "serve", "/models/m", "--tensor-parallel-size", "4", "--max-model-len",
           "8192"]
    ctx, _, _ = run(tmp_path, [proc(80, argv=now, started_by={"kind": "unit",
                                                               "id": "vllm.service"})], known)
    ev = next(iter(ctx.box.evidence))
    assert known.argv == now and known.tp == 4 and known.flags["max_model_len"] == "8192"
    assert (known.argv_source, known.argv_line, known.argv_evidence) == (
        "/proc/80/cmdline", 0, [ev, "u1"])
    text = ("In effect now: process 80 runs with max_model_len=8192, tensor_parallel_size=4; "
            "the files say max_model_len=None, tensor_parallel_size=2 "
            "(/etc/systemd/system/vllm.service:7): changed since the process started, a "
            "restart would apply it")
    assert known.problems == known.argv_drift == [text]


@pytest.mark.parametrize("argv", [
    SERVE,  # the same flags: nothing changed
    ["/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "/models/m",
     "--tensor-parallel-size", "2"],  # another spelling of the same flags
    ["/bin/sh", "/opt/start.sh"],  # the unit's shell: no engine argv to compare
])
def test_the_same_command_or_no_engine_argv_changes_nothing(tmp_path: Path,
                                                            argv: list[str]) -> None:
    known = unit()
    run(tmp_path, [proc(81, argv=argv, started_by={"kind": "unit", "id": "vllm.service"})],
        known)
    assert (known.argv, known.argv_source, known.argv_line) == (
        SERVE, "/etc/systemd/system/vllm.service", 7)
    assert known.problems == known.argv_drift == []


def test_a_config_file_adds_flags_so_argv_is_not_compared(tmp_path: Path) -> None:
    # `--config FILE`: the file's keys are flags too; the argv alone is not the whole reading
    known = unit()
    known.flags["config"] = "/etc/vllm.yaml"
    run(tmp_path, [proc(82, argv=["vllm", "serve", "/models/m", "--config",
                                  "/etc/vllm.yaml"],
                        started_by={"kind": "unit", "id": "vllm.service"})], known)
    assert known.argv == SERVE and known.argv_drift == []


# -- properties over generated captures -----------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(parents=st.lists(st.integers(0, 6), min_size=1, max_size=6))
def test_each_process_tree_is_one_server_per_root(tmp_path_factory: pytest.TempPathFactory,
                                                  parents: list[int]) -> None:
    # process 100+i has parent 100+parents[i] (itself or a later one: outside the capture,
    # so a root); a server per process whose parent is not captured
    pids = [100 + i for i in range(len(parents))]
    procs = [proc(pid, ppid=100 + par if par < i else 1) for pid, par, i in
             zip(pids, parents, range(len(parents)), strict=True)]
    roots = [p["pid"] for p in procs if p["ppid"] not in pids]
    _, _, found = run(tmp_path_factory.mktemp("p"), procs)
    assert sorted(found) == sorted(f"pid {r}" for r in roots)
