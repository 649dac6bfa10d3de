"""A Compose ``command:`` on an image with an ENTRYPOINT. Expected from Docker's and Compose's
documented semantics, written before running:
- Docker runs ENTRYPOINT (exec form) with the command as its arguments; Compose's ``command``
  overrides the image's CMD only, ``entrypoint`` overrides its ENTRYPOINT (Dockerfile
  reference, "Understand how CMD and ENTRYPOINT interact"; Compose file reference). So
  ``command: vllm serve M`` is the whole command line only on an image with no ENTRYPOINT.
- The image's ENTRYPOINT is in its config (``docker inspect --type image IMAGE``:
  ``Config.Entrypoint``, ``Config.Cmd``); a running or stopped container's ``docker inspect``
  shows ``Path`` + ``Args`` as the daemon resolved them: the authority, over the file.
- vllm/vllm-openai's ENTRYPOINT changed across releases: ``python3 -m
  vllm.entrypoints.openai.api_server`` (vLLM's docker/Dockerfile through mid-2025; vllm#17172)
  then ``vllm serve`` (the Dockerfile since; vllm-project.github.io#305: a command repeating
  ``vllm serve`` "errors at startup"). Flags alone mean the same to both; a command starting
  with ``vllm serve``/``python``/``bash`` is refused by both (unrecognized arguments).
- Where nothing shows the image's ENTRYPOINT, whether such a command starts the engine is not
  established: said with the compose file and the ``command`` line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentkit._hostmodel.runtimes import _compose

from .runtimes_snap import discover, snapshot


def _file(image: str, command: str) -> str:
    return (f"services:\n  llm:\n    image: {image}\n    command: {command}\n"
            "    restart: always\n")


def _image(entry: list[str] | None, cmd: list[str] | None = None) -> str:
    return json.dumps([{"Id": "sha256:" + "b" * 64, "RepoTags": ["x"],
                        "Config": {"Entrypoint": entry, "Cmd": cmd, "Env": ["PATH=/usr/bin"]}}],
                      indent=4)


def _run(tmp_path: Path, image: str, command: str,
         inspect: str | None = None) -> tuple[Any, str]:
    cmds = [(["docker", "inspect", "--type", "image", image], inspect, 0)] if inspect else []
    host = snapshot(tmp_path, {"opt/llm/compose.yaml": _file(image, command)}, cmds)
    _, _, servers = discover(_compose, host)
    return servers.get("llm-llm-1"), "/opt/llm/compose.yaml:4"


def _unestablished(server: Any, where: str) -> list[str]:
    return [p for p in server.argv_problems if "not established" in p and where in p]


def test_engine_command_on_the_vllm_image_without_its_config_is_not_established(
        tmp_path: Path) -> None:
    s, where = _run(tmp_path, "vllm/vllm-openai:v0.11.0",
                    "vllm serve /models/m --tensor-parallel-size 8")
    assert s is not None
    said = _unestablished(s, where)
    assert said and "ENTRYPOINT" in said[0], s.argv_problems


def test_engine_command_on_an_unknown_image_is_not_established(tmp_path: Path) -> None:
    s, where = _run(tmp_path, "registry.local/llm:7", "vllm serve /models/m -tp 2")
    assert s is not None
    said = _unestablished(s, where)
    assert said and "ENTRYPOINT" in said[0], s.argv_problems


def test_the_image_config_decides_the_command_line(tmp_path: Path) -> None:
    # ENTRYPOINT vllm serve + command vllm serve …: Docker runs both, vLLM refuses it
    s, _ = _run(tmp_path / "a", "vllm/vllm-openai:v0.11.0", "vllm serve /models/m -tp 8",
                _image(["vllm", "serve"]))
    assert s is not None
    assert s.argv == ["vllm", "serve", "vllm", "serve", "/models/m", "-tp", "8"]
    assert "refuses" in s.refused and "exits at start" in s.refused, s.refused
    assert not s.argv_problems
    # the older ENTRYPOINT with flags: vLLM's server with those flags, nothing unknown
    s, _ = _run(tmp_path / "b", "vllm/vllm-openai:v0.8.5",
                "--model /models/m --tensor-parallel-size 4",
                _image(["python3", "-m", "vllm.entrypoints.openai.api_server"]))
    assert s is not None
    assert s.argv == ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
                      "/models/m", "--tensor-parallel-size", "4"]
    assert (s.engine, s.tp) == ("vllm", 4)
    assert not s.argv_problems
    # no ENTRYPOINT: the command is the whole command line
    s, _ = _run(tmp_path / "c", "registry.local/llm:7", "vllm serve /models/m -tp 2",
                _image(None, ["bash"]))
    assert s is not None
    assert s.argv == ["vllm", "serve", "/models/m", "-tp", "2"]
    assert (s.engine, s.tp) == ("vllm", 2)
    assert not s.argv_problems


def test_flags_alone_mean_the_same_to_either_vllm_entrypoint(tmp_path: Path) -> None:
    s, _ = _run(tmp_path, "vllm/vllm-openai:latest", "--model /models/m -tp 2")
    assert s is not None
    assert (s.engine, s.tp) == ("vllm", 2)
    assert not s.argv_problems
    notes = " ".join(s.notes)
    assert "vllm serve" in notes and "api_server" in notes


def test_the_container_s_inspect_wins_over_the_file(tmp_path: Path) -> None:
    # the host model reads containers before compose files (runtimes.RUNTIMES): a service
    # whose container was inspected is that container, Path + Args as the daemon ran them
    from agentkit._hostmodel.runtimes import _containers

    labels = {"com.docker.compose.project": "llm", "com.docker.compose.service": "llm",
              "com.docker.compose.project.config_files": "/opt/llm/compose.yaml"}
    inspect = [{"Id": "c" * 64, "Name": "/llm-llm-1", "Path": "vllm",
                "Args": ["serve", "/models/b", "--tensor-parallel-size", "4"],
                "State": {"Status": "running", "Running": True}, "RestartCount": 0,
                "HostConfig": {"RestartPolicy": {"Name": "always"}}, "Mounts": [],
                "Config": {"Env": [], "Labels": labels}}]
    ps = {"Command": "\"vllm serve /models/b\"", "ID": "c" * 64, "State": "running",
          "Image": "vllm/vllm-openai:v0.11.0", "Names": "llm-llm-1"}
    host = snapshot(tmp_path, {"opt/llm/compose.yaml": _file(
        "vllm/vllm-openai:v0.11.0", "vllm serve /models/a --tensor-parallel-size 8")}, [
        (["docker", "ps", "--all", "--no-trunc", "--format", "{{json .}}"],
         json.dumps(ps) + "\n", 0),
        (["docker", "inspect", "--type", "container", "llm-llm-1"],
         json.dumps(inspect, indent=4), 0)])
    _, model, shown = discover(_containers, host)
    model.servers += shown.values()
    _, _, declared = discover(_compose, host, model)
    assert declared == {}  # the compose file adds no second server
    s = shown["llm-llm-1"]
    assert s.argv == ["vllm", "serve", "/models/b", "--tensor-parallel-size", "4"]
    assert (s.tp, s.flags.get("model")) == (4, "/models/b")
    assert not s.argv_problems and not [p for p in s.problems if "ENTRYPOINT" in p]


def test_the_same_rule_for_a_unit_s_docker_run_and_a_pod_s_args(tmp_path: Path) -> None:
    # `docker run IMAGE CMD…`: CMD… is the ENTRYPOINT's arguments, as with Compose; a
    # Kubernetes container's `args` without `command` likewise (the Pod API: "command"
    # overrides ENTRYPOINT, "args" its CMD)
    from agentkit._hostmodel.runtimes import _kubernetes, _systemd

    unit = ("[Service]\nExecStart=/usr/bin/docker run --rm --name v vllm/vllm-openai:v0.11.0 "
            "vllm serve /models/m --tensor-parallel-size 2\n")
    host = snapshot(tmp_path / "u", {"etc/systemd/system/v.service": unit})
    _, _, servers = discover(_systemd, host)
    s = servers["v.service"]
    assert _unestablished(s, "/etc/systemd/system/v.service:2"), s.argv_problems
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
           "    - name: v\n      image: vllm/vllm-openai:v0.11.0\n"
           "      args: [\"vllm\", \"serve\", \"/models/m\"]\n")
    host = snapshot(tmp_path / "k", {"opt/k8s/p.yaml": pod})
    _, _, servers = discover(_kubernetes, host)
    assert _unestablished(servers["pod/p"], "/opt/k8s/p.yaml:9"), servers["pod/p"].argv_problems


def test_the_sandbox_lets_an_image_reference_through_for_image_inspect_only() -> None:
    import pytest

    from agentkit._sandbox._rules import Refused
    from agentkit._sandbox._rules_runtimes import docker

    for ref in ("vllm/vllm-openai:v0.11.0", "ghcr.io/org/img@sha256:" + "a" * 64):
        docker(["inspect", "--type", "image", ref])
        docker(["inspect", "--type=image", ref])
        with pytest.raises(Refused):
            docker(["inspect", "--type", "container", ref])
        docker(["image", "inspect", ref])
    for bad in ("-H", "--host=tcp://x", "/x", ":x"):
        with pytest.raises(Refused):
            docker(["inspect", "--type", "image", bad])
        with pytest.raises(Refused):
            docker(["image", "inspect", bad])
    for verb in (["image", "rm", "x"], ["image", "ls"], ["image", "pull", "x"], ["image"]):
        with pytest.raises(Refused):
            docker(verb)


def test_a_unit_s_container_inspected_is_the_authority_over_its_run_line(tmp_path: Path) -> None:
    # systemd units are read first, containers after: the container a unit's `docker run
    # --name v` started, inspected, gives what runs now; the line's ENTRYPOINT doubt concerns
    # its next start only
    import anyio

    from agentkit._hostmodel._build import build_host_model
    from agentkit._sandbox._context import RecipeContext
    from agentkit._sandbox._sandbox import Sandbox
    from agentkit._types import TaskSpec

    unit = ("[Service]\nExecStart=/usr/bin/docker run --rm --name v vllm/vllm-openai:v0.11.0 "
            "vllm serve /models/m --tensor-parallel-size 2\n")
    inspect = [{"Id": "d" * 64, "Name": "/v", "Path": "vllm",
                "Args": ["serve", "/models/m", "--tensor-parallel-size", "2"],
                "State": {"Status": "running", "Running": True}, "RestartCount": 0,
                "HostConfig": {"RestartPolicy": {"Name": "no"}}, "Mounts": [],
                "Config": {"Env": [], "Labels": {}}}]
    ps = {"Command": "\"vllm serve /models/m\"", "ID": "d" * 64, "State": "running",
          "Image": "vllm/vllm-openai:v0.11.0", "Names": "v"}
    host = snapshot(tmp_path, {"etc/systemd/system/v.service": unit}, [
        (["docker", "ps", "--all", "--no-trunc", "--format", "{{json .}}"],
         json.dumps(ps) + "\n", 0),
        (["docker", "inspect", "--type", "container", "v"], json.dumps(inspect, indent=4), 0)])
    ctx = RecipeContext(Sandbox(host, task_id="t"), TaskSpec(id="t", title="t", objective="o"))
    model = anyio.run(build_host_model, ctx)
    [s] = model.servers
    assert (s.name, s.argv, s.tp) == (
        "v.service", ["vllm", "serve", "/models/m", "--tensor-parallel-size", "2"], 2)
    assert s.argv_problems == []
    assert [p for p in s.problems if "not established" in p and "ENTRYPOINT" in p]


def test_a_docker_image_inspect_capture_serves_too(tmp_path: Path) -> None:
    # `docker image inspect IMAGE` prints the same array as `docker inspect --type image`
    image = "vllm/vllm-openai:v0.8.5"
    host = snapshot(tmp_path, {"opt/llm/compose.yaml": _file(image, "vllm serve /models/m")},
                    [(["docker", "image", "inspect", image],
                      _image(["python3", "-m", "vllm.entrypoints.openai.api_server"]), 0)])
    s = discover(_compose, host)[2]["llm-llm-1"]
    assert s.argv == ["python3", "-m", "vllm.entrypoints.openai.api_server", "vllm", "serve",
                      "/models/m"]
    assert "unrecognized arguments" in s.refused and not s.argv_problems


def test_a_positional_model_on_the_vllm_image_without_its_config_is_not_established(
        tmp_path: Path) -> None:
    # `vllm serve`'s parser adds a positional model tag; the api_server module's parser
    # (make_arg_parser alone) takes flags only, so after the earlier ENTRYPOINT vLLM exits
    # with "unrecognized arguments": which ENTRYPOINT, and so whether it starts, is open
    s, where = _run(tmp_path, "vllm/vllm-openai:latest", "/models/m -tp 2")
    assert s is not None and not s.refused
    said = _unestablished(s, where)
    assert said and "positional" in said[0], s.argv_problems


def test_a_positional_model_after_the_api_server_entrypoint_is_refused(tmp_path: Path) -> None:
    entry = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    s, where = _run(tmp_path, "vllm/vllm-openai:v0.4.0", "/models/m -tp 2",
                    inspect=_image(entry))
    assert s is not None and where in s.refused and "unrecognized arguments" in s.refused
    s, _ = _run(tmp_path / "b", "vllm/vllm-openai:v0.11.0", "/models/m -tp 2",
                inspect=_image(["vllm", "serve"]))
    assert s is not None and not s.refused and not s.argv_problems
    assert s.argv == ["vllm", "serve", "/models/m", "-tp", "2"]
