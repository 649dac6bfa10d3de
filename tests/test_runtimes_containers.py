"""The Docker/Podman runtime (``_hostmodel/runtimes/_containers.py``) called directly on
snapshots holding ``ps`` and ``inspect`` captures. Expected values from Docker's and Podman's
documentation, written before running:
- ``docker ps --format '{{json .}}'`` prints one JSON object per line (``Names`` a string,
  ``Command`` quoted); ``podman ps --format '{{json .}}'`` prints one array (``Names`` a list,
  ``Command`` a list);
- ``docker inspect``: ``Name`` with a leading ``/``, ``Path`` + ``Args`` (what the process
  runs), ``Config.Env``, ``Config.User`` (``user[:group]``), ``State.Status`` (created, running,
  paused, restarting, exited, dead), ``State.ExitCode``, ``RestartCount``;
- ``HostConfig.RestartPolicy.Name``: ``always`` restarts with the daemon; ``unless-stopped``
  too, unless the container was stopped; ``no`` and ``on-failure`` do not;
- ``HostConfig.DeviceRequests`` (``--gpus``): ``Count`` -1 is ``all``, ``DeviceIDs``,
  ``Capabilities`` ``[["gpu"]]``; ``HostConfig.ShmSize`` defaults to 64 MiB and ``IpcMode``
  ``host`` shares the host's /dev/shm; ``Mounts[].Source`` → ``Destination``;
- Compose labels ``com.docker.compose.project`` / ``.service`` /
  ``.project.config_files``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit._hostmodel._model import HostModel, Server
from agentkit._hostmodel.runtimes import _containers

from .runtimes_snap import cited, discover, snapshot


def ps(cli: str) -> list[str]:
    return [cli, "ps", "--all", "--no-trunc", "--format", "{{json .}}"]


def inspect(cli: str, name: str) -> list[str]:
    return [cli, "inspect", "--type", "container", name]


def item(name: str, status: str = "running", **over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "Id": "0123456789abcdef" * 4, "Name": f"/{name}", "Path": "vllm",
        "Args": ["serve", "/models/m", "--tensor-parallel-size", "2"],
        "State": {"Status": status, "Running": status == "running", "ExitCode": 0},
        "RestartCount": 0,
        "HostConfig": {"RestartPolicy": {"Name": "always"}, "IpcMode": "host"},
        "Mounts": [], "Config": {"Env": ["NCCL_PROTO=LL", "PATH=/usr/bin"], "Labels": {}}}
    for key, value in over.items():
        base[key] = value
    return base


def row(name: str, command: str = "vllm serve /models/m", state: str = "running",
        image: str = "vllm/vllm-openai:v0.11.0") -> str:
    return json.dumps({"Command": f'"{command}"', "Image": image, "Names": name,
                       "State": state})


def containers(tmp_path: Path, commands: list[tuple[list[str], str, int]],
               model: HostModel | None = None) -> tuple[Any, HostModel, dict[str, Server]]:
    return discover(_containers, snapshot(tmp_path, {}, commands), model)


def test_an_inspected_container_is_read_from_inspect(tmp_path: Path) -> None:
    it = item("llm")
    it["Config"]["User"] = "1000:1000"
    out = json.dumps([it], indent=4)
    ctx, model, servers = containers(tmp_path, [
        (ps("docker"), row("llm") + "\n" + row("web", "nginx -g daemon", image="nginx") + "\n",
         0), (inspect("docker", "llm"), out, 0)])
    assert list(servers) == ["llm"]
    s = servers["llm"]
    assert (s.runtime, s.path, s.user, s.container_id) == ("docker", "docker inspect llm",
                                                           "1000", "0123456789ab")
    assert s.argv == ["vllm", "serve", "/models/m", "--tensor-parallel-size", "2"]
    assert s.log_argv == ["docker", "logs", "--tail", "2000", "--timestamps", "llm"]
    # the key's line and the values below it: the excerpt shows the arguments it cites
    assert cited(ctx, s.argv_evidence[0])[1] == (
        '"Args": [\n"serve",\n"/models/m",\n"--tensor-parallel-size",\n"2"')
    proto = s.env["NCCL_PROTO"]
    assert (proto.value, proto.source, proto.origin) == (
        "LL", "docker inspect llm, Config.Env", "container environment")
    assert cited(ctx, proto.evidence[0])[1] == '"NCCL_PROTO=LL",'
    assert model.looked_in == ["`docker ps`", "`podman ps` (not available here)"]
    assert "IPC mode host, /dev/shm 64 MiB" in s.notes


def test_podman_prints_one_array(tmp_path: Path) -> None:
    listing = json.dumps([{"Names": ["pod-llm"], "Command": ["vllm", "serve", "/m"],
                           "Image": "x", "State": "running"}])
    _, _, servers = containers(tmp_path, [
        (ps("podman"), listing, 0),
        (inspect("podman", "pod-llm"), json.dumps([item("pod-llm")], indent=2), 0)])
    assert servers["pod-llm"].runtime == "podman"


def test_entrypoint_and_cmd_when_path_is_empty(tmp_path: Path) -> None:
    it = item("llm", Path="", Args=[])
    it["Config"]["Entrypoint"] = ["vllm", "serve"]
    it["Config"]["Cmd"] = ["/models/x"]
    ctx, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                            (inspect("docker", "llm"),
                                             json.dumps([it], indent=4), 0)])
    assert servers["llm"].argv == ["vllm", "serve", "/models/x"]
    assert cited(ctx, servers["llm"].argv_evidence[0])[1] == '"Cmd": [\n"/models/x"'


@pytest.mark.parametrize(("status", "code", "value", "detail"), [
    ("running", 0, "running", "docker inspect: State.Status running"),
    ("restarting", 1, "crash-looping", "docker inspect: State.Status restarting"),
    ("exited", 1, "failed", "docker inspect: State.Status exited, exit code 1"),
    ("exited", 0, "stopped", "docker inspect: State.Status exited, exit code 0"),
    ("created", 0, "stopped", "docker inspect: State.Status created"),
    ("paused", 0, "stopped", "docker inspect: State.Status paused"),
    ("dead", 0, "failed", "docker inspect: State.Status dead"),
    ("removing", 0, "unknown", "docker inspect: State.Status removing"),
])
def test_state_from_inspect(tmp_path: Path, status: str, code: int, value: str,
                            detail: str) -> None:
    it = item("llm", status)
    it["State"]["ExitCode"] = code
    ctx, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                            (inspect("docker", "llm"),
                                             json.dumps([it], indent=4), 0)])
    st = servers["llm"].state
    assert (st.value, st.detail, st.restarts) == (value, detail, 0)
    assert cited(ctx, st.evidence[0])[1] == f'"Status": "{status}",'


def test_restarts_are_counted(tmp_path: Path) -> None:
    _, _, servers = containers(tmp_path, [
        (ps("docker"), row("llm"), 0),
        (inspect("docker", "llm"), json.dumps([item("llm", "restarting", RestartCount=5)]), 0)])
    st = servers["llm"].state
    assert (st.restarts, st.detail) == (
        5, "docker inspect: State.Status restarting, restarted 5 times")


@pytest.mark.parametrize(("policy", "status", "enabled", "detail"), [
    ("always", "exited", True, "restart policy always"),
    ("unless-stopped", "running", True, "restart policy unless-stopped"),
    ("unless-stopped", "exited", False, "restart policy unless-stopped, and it was stopped"),
    ("unless-stopped", "created", False, "restart policy unless-stopped, and it was stopped"),
    ("on-failure", "running", False, "restart policy on-failure"),
    (None, "running", False, "restart policy no"),
])
def test_restart_policy_is_whether_it_comes_back(tmp_path: Path, policy: str | None,
                                                 status: str, enabled: bool,
                                                 detail: str) -> None:
    it = item("llm", status)
    it["HostConfig"]["RestartPolicy"] = {"Name": policy} if policy else {}
    ctx, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                            (inspect("docker", "llm"),
                                             json.dumps([it], indent=4), 0)])
    st = servers["llm"].state
    assert (st.enabled, st.enabled_detail) == (enabled, detail)
    assert cited(ctx, st.enabled_evidence[0])[1].startswith('"RestartPolicy": {')


@pytest.mark.parametrize(("host_config", "env", "gpus"), [
    ({"DeviceRequests": [{"Driver": "", "Count": -1, "Capabilities": [["gpu"]]}]}, [],
     "all GPUs"),
    ({"DeviceRequests": [{"Driver": "nvidia", "Count": 2, "Capabilities": None}]}, [],
     "2 GPUs"),
    ({"DeviceRequests": [{"Driver": "", "DeviceIDs": ["0", "3"],
                          "Capabilities": [["gpu", "utility"]]}]}, [], "GPUs 0,3"),
    ({"DeviceRequests": [{"Driver": "other", "Count": 1, "Capabilities": [["tpu"]]}]}, [], ""),
    ({"Runtime": "nvidia"}, ["NVIDIA_VISIBLE_DEVICES=1,2"], "NVIDIA_VISIBLE_DEVICES=1,2"),
    ({"Runtime": "runc"}, ["NVIDIA_VISIBLE_DEVICES=1,2"], ""),
    ({"Devices": [{"PathOnHost": "/dev/nvidia0"}, {"PathOnHost": "/dev/nvidiactl"},
                  {"PathOnHost": "/dev/nvidia1"}]}, [], "/dev/nvidia0; /dev/nvidia1"),
])
def test_gpus_the_daemon_gives(tmp_path: Path, host_config: dict[str, Any], env: list[str],
                               gpus: str) -> None:
    it = item("llm")
    it["HostConfig"].update(host_config)
    it["Config"]["Env"] = env
    _, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                          (inspect("docker", "llm"), json.dumps([it]), 0)])
    assert servers["llm"].gpus == gpus


def test_mounts_and_the_root_filesystem_while_running(tmp_path: Path) -> None:
    it = item("llm", Mounts=[{"Source": "/data/models", "Destination": "/models"},
                             {"Source": "", "Destination": "/anon"}],
              GraphDriver={"Data": {"MergedDir": "/var/lib/docker/overlay2/x/merged"}})
    stopped = item("old", "exited", GraphDriver=it["GraphDriver"])
    _, _, servers = containers(tmp_path, [
        (ps("docker"), row("llm") + "\n" + row("old"), 0),
        (inspect("docker", "llm"), json.dumps([it]), 0),
        (inspect("docker", "old"), json.dumps([stopped]), 0)])
    assert servers["llm"].mounts == {"/data/models": "/models"}
    assert servers["llm"].rootfs == "/var/lib/docker/overlay2/x/merged"
    assert servers["old"].rootfs == ""


@pytest.mark.parametrize(("ipc", "shm", "tp_pp", "warned"), [
    ("", None, ("2", "1"), True), ("private", 64 << 20, ("1", "2"), True),
    ("host", None, ("2", "1"), False), ("", 16 << 30, ("2", "1"), False),
    ("", None, ("1", "1"), False), ("shareable", (64 << 20) + 1, ("4", "1"), False)])
def test_a_small_private_shm_is_a_problem_for_a_multi_gpu_server(
        tmp_path: Path, ipc: str, shm: int | None, tp_pp: tuple[str, str], warned: bool) -> None:
    it = item("llm", Args=["serve", "/m", "--tensor-parallel-size", tp_pp[0],
                           "--pipeline-parallel-size", tp_pp[1]])
    it["HostConfig"]["IpcMode"] = ipc
    if shm is not None:
        it["HostConfig"]["ShmSize"] = shm
    _, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                          (inspect("docker", "llm"), json.dumps([it]), 0)])
    s = servers["llm"]
    size = (shm or 64 << 20) >> 20
    said = [p for p in s.problems if p.startswith("/dev/shm is")]
    assert said == ([f"/dev/shm is {size} MiB and the IPC namespace is private: NCCL and the "
                     "engine's workers share memory through /dev/shm, so this multi-GPU server "
                     "can fail or slow down (run it with --ipc=host or a larger --shm-size)"]
                    if warned else [])
    assert f"IPC mode {ipc or 'private'}, /dev/shm {size} MiB" in s.notes


def test_a_compose_container_names_its_project(tmp_path: Path) -> None:
    it = item("llm-vllm-1")
    it["Config"]["Labels"] = {"com.docker.compose.project": "llm",
                              "com.docker.compose.service": "vllm",
                              "com.docker.compose.project.config_files": "/opt/llm/compose.yaml"}
    _, _, servers = containers(tmp_path, [(ps("docker"), row("llm-vllm-1"), 0),
                                          (inspect("docker", "llm-vllm-1"),
                                           json.dumps([it]), 0)])
    s = servers["llm-vllm-1"]
    assert (s.runtime, s.files, s.compose_project, s.compose_service) == (
        "compose", ["/opt/llm/compose.yaml"], "llm", "vllm")
    assert "started by Docker Compose (/opt/llm/compose.yaml, service vllm)" in s.notes


def test_without_inspect_ps_alone_says_what_it_can(tmp_path: Path) -> None:
    listing = "\n".join([row("web", "nginx", image="python:3"),
                         row("llm", "vllm serve /models/m", state="restarting"),
                         row("job", "python3 train.py", state="exited")])
    ctx, model, servers = containers(tmp_path, [(ps("docker"), listing, 0)])
    assert list(servers) == ["llm"]  # train.py starts no engine: nothing said of it
    s = servers["llm"]
    assert (s.path, s.argv, s.env) == ("docker ps", ["vllm", "serve", "/models/m"], {})
    assert (s.state.value, s.state.detail) == ("crash-looping", "docker ps: restarting")
    assert cited(ctx, s.state.evidence[0])[1] == row("llm", "vllm serve /models/m",
                                                     state="restarting")
    assert model.problems == ["`docker inspect llm` could not be read: its environment, "
                              "mounts and restart policy are unknown"]
    assert any(n.startswith("read from `docker ps` only") for n in s.notes)


@pytest.mark.parametrize(("state", "value"), [
    ("running", "running"), ("Exited", "stopped"), ("created", "stopped"), ("dead", "failed"),
    ("paused", "unknown")])
def test_ps_states(tmp_path: Path, state: str, value: str) -> None:
    _, _, servers = containers(tmp_path, [(ps("docker"), row("llm", state=state), 0)])
    assert servers["llm"].state.value == value


def test_a_podman_array_without_inspect_cites_the_whole_output(tmp_path: Path) -> None:
    listing = json.dumps([{"Names": ["a"], "Command": ["vllm", "serve", "/m"], "Image": "x",
                           "State": "running"}])
    ctx, _, servers = containers(tmp_path, [(ps("podman"), listing, 0)])
    assert cited(ctx, servers["a"].argv_evidence[0])[0].startswith("$ podman ps --all")


def test_a_failed_ps_is_a_problem(tmp_path: Path) -> None:
    _, model, servers = containers(tmp_path, [(ps("docker"), "", 1)])
    assert servers == {}
    assert model.problems[0].startswith("`docker ps` failed (exit 1): ")


def test_a_unit_that_runs_the_container_adopts_it(tmp_path: Path) -> None:
    model = HostModel()
    unit = Server(name="llm.service", path="/etc/systemd/system/llm.service", files=[],
                  argv=["docker", "run", "--name", "llm", "img"], argv_source="u",
                  argv_line=1, argv_evidence=[], env={}, runtime="docker")
    unit.container_name = "llm"
    model.servers.append(unit)
    _, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                          (inspect("docker", "llm"), json.dumps([item("llm")]),
                                           0)], model)
    assert servers == {}  # one server: the unit, now with the container's facts
    assert unit.env["NCCL_PROTO"].value == "LL"


def test_two_objects_in_one_inspect_are_cited_in_their_own_lines(tmp_path: Path) -> None:
    a, b = item("llm"), item("llm")
    b["Id"] = "f" * 64
    b["Config"]["Env"] = ["NCCL_PROTO=Simple"]
    ctx, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                            (inspect("docker", "llm"),
                                             json.dumps([a, b], indent=4), 0)])
    # the second object (same name) replaces the first in this dict; its own line is cited
    locator, text = cited(ctx, servers["llm"].env["NCCL_PROTO"].evidence[0])
    assert text == '"NCCL_PROTO=Simple"'
    assert int(locator.rsplit(" ", 1)[-1]) > 40


def test_a_compact_inspect_output_is_read(tmp_path: Path) -> None:
    """``docker inspect --format json`` prints the array on one line: no setting has a line of
    its own, so each cites the whole output (this crashed discovery before)."""
    out = json.dumps([item("llm")])
    ctx, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                            (inspect("docker", "llm"), out, 0)])
    ev = servers["llm"].env["NCCL_PROTO"].evidence[0]
    assert cited(ctx, ev)[1] == out[:399] + "…"  # cut at 400 characters, and says so


def test_podman_is_asked_when_docker_ps_fails(tmp_path: Path) -> None:
    listing = json.dumps([7, {"Names": ["p"], "Command": ["vllm", "serve", "/m"],
                              "Image": "x", "State": "running"}])
    _, model, servers = containers(tmp_path, [(ps("docker"), "", 1), (ps("podman"), listing, 0)])
    assert list(servers) == ["p"]
    assert model.looked_in == ["`docker ps`", "`podman ps`"]


def test_ps_rows_name_image_and_linked_names(tmp_path: Path) -> None:
    """``.Names`` of a container with legacy links lists them comma-separated after its own
    name; a container whose command says nothing is still inspected for its engine image."""
    row_ = json.dumps({"Command": '"--model /models/m"', "Image": "vllm/vllm-openai:v1",
                       "Names": "llm,web/llm", "State": "running"})
    _, _, servers = containers(tmp_path, [(ps("docker"), row_, 0),
                                          (inspect("docker", "llm"), json.dumps([item("llm")]),
                                           0)])
    assert list(servers) == ["llm"]


def test_a_ps_only_server_says_where_everything_comes_from(tmp_path: Path) -> None:
    ctx, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0)])
    s = servers["llm"]
    assert (s.path, s.files, s.argv_source, s.argv_line, s.runtime) == (
        "docker ps", [], "docker ps", 0, "docker")
    assert s.log_argv == ["docker", "logs", "--tail", "2000", "--timestamps", "llm"]
    assert "read from `docker ps` only: its environment (NCCL settings), mounts and restart " \
           "policy are unknown" in s.notes
    locator, _ = cited(ctx, s.argv_evidence[0])
    assert locator.endswith(" line 1")


def test_a_podman_array_cites_the_whole_listing(tmp_path: Path) -> None:
    listing = json.dumps([{"Names": ["a"], "Command": ["vllm", "serve", "/m"], "Image": "x",
                           "State": "running"}], indent=1)
    ctx, _, servers = containers(tmp_path, [(ps("podman"), listing, 0)])
    assert " line " not in cited(ctx, servers["a"].argv_evidence[0])[0]


def test_each_inspected_object_cites_its_own_lines(tmp_path: Path) -> None:
    a, b = item("llm"), item("llm2")
    b["Id"] = "f" * 64
    ctx, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                            (inspect("docker", "llm"),
                                             json.dumps([a, b], indent=4), 0)])
    first = cited(ctx, servers["llm"].env["NCCL_PROTO"].evidence[0])[0]
    second = cited(ctx, servers["llm2"].env["NCCL_PROTO"].evidence[0])[0]
    assert int(first.rsplit(" ", 1)[-1]) < int(second.rsplit(" ", 1)[-1])
    s = servers["llm2"]
    assert (s.argv_source, s.argv_line, s.files, s.user) == ("docker inspect llm2", 0, [],
                                                             "root")
    proto = s.env["NCCL_PROTO"]
    assert (proto.name, proto.line) == ("NCCL_PROTO", 0)


def test_an_inspect_without_a_command_or_with_a_bare_path(tmp_path: Path) -> None:
    none = item("a", Path="", Args=[])
    bare = item("b", Path="python3", Args=[])
    _, _, servers = containers(tmp_path, [
        (ps("docker"), row("a", "python3") + "\n" + row("b", "python3"), 0),
        (inspect("docker", "a"), json.dumps([none]), 0),
        (inspect("docker", "b"), json.dumps([bare]), 0)])
    assert servers == {}


def test_an_environment_value_may_hold_an_equals_sign(tmp_path: Path) -> None:
    """NCCL_IB_HCA's exact-match form starts with '=' (NCCL's documentation): the name ends at
    the first '='."""
    it = item("llm")
    it["Config"]["Env"] = ["NCCL_IB_HCA==mlx5_0:1"]
    _, _, servers = containers(tmp_path, [(ps("docker"), row("llm"), 0),
                                          (inspect("docker", "llm"), json.dumps([it]), 0)])
    assert servers["llm"].env["NCCL_IB_HCA"].value == "=mlx5_0:1"


def test_a_start_script_on_a_mount_is_followed(tmp_path: Path) -> None:
    it = item("llm", Path="/bin/sh", Args=["/scripts/start.sh"],
              Mounts=[{"Source": "/opt/scripts", "Destination": "/scripts"}])
    host = snapshot(tmp_path, {"opt/scripts/start.sh": "#!/bin/sh\nexec vllm serve /models/s\n"},
                    [(ps("docker"), row("llm", "/bin/sh /scripts/start.sh"), 0),
                     (inspect("docker", "llm"), json.dumps([it]), 0)])
    s = discover(_containers, host)[2]["llm"]
    assert s.script == "/scripts/start.sh"
