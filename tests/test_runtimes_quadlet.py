"""Podman Quadlet (``_hostmodel/runtimes/_quadlet.py``) called directly on small snapshots (no
investigation: each case is a few tool calls, so its mutation target stays fast).

Expected values from podman-systemd.unit(5) and quadlet's own reading of the keys
(pkg/systemd/quadlet/quadlet.go, pkg/systemd/parser/unitfile.go), written before running:
- search path, root: /run/containers/systemd, /etc/containers/systemd, then
  /usr/share/containers/systemd; a file in an earlier directory shadows the same name in a
  later one. ``NAME.container`` generates
  ``NAME.service``; an existing unit file of that name is what systemd loads instead.
- ``Image=`` is the one required key (no Image, no service); ``ContainerName=`` defaults to
  ``systemd-%N`` (``systemd-NAME``), also when empty; single-valued keys (``Image``,
  ``ContainerName``, ``EnvironmentHost``, ``Entrypoint``, ``Exec``) take their *last* line.
- ``Environment=`` → ``--env`` (systemd's quoting); ``EnvironmentFile=`` → ``--env-file``, a
  relative path relative to the unit file's directory, several per line;
  ``EnvironmentHost=`` is a boolean (1/yes/true/on, any case) → ``--env-host``;
  ``Volume=`` → ``-v``; ``AddDevice=`` → ``--device`` (several per line); ``ShmSize=`` →
  ``--shm-size``; ``Entrypoint=`` → ``--entrypoint``; ``PodmanArgs=`` passed as words;
  ``Exec=`` the words after the image.
- podman run(1): ``--env`` wins over ``--env-file``; the ``[Service] Environment=`` of the unit
  is the podman CLI's environment, reaching the container only through ``--env-host`` or a
  bare ``--env NAME``.
"""

from __future__ import annotations

from hashlib import sha256
from pathlib import Path

import pytest

from agentkit._hostmodel._model import HostModel, Server
from agentkit._hostmodel.runtimes import _quadlet
from agentkit._sandbox._context import RecipeContext

from .runtimes_snap import cited, discover, snapshot

ETC = "etc/containers/systemd"
USR = "usr/share/containers/systemd"
IMAGE = "docker.io/vllm/vllm-openai:v0.13.0"
LIST_UNITS = ["systemctl", "list-units", "--type=service", "--all", "--no-legend", "--plain"]


def unit(container: str = "", service: str = "", image: str = IMAGE) -> str:
    return (f"[Unit]\nDescription=LLM\n\n[Container]\nImage={image}\n{container}"
            f"Exec=--model /models/m\n\n[Service]\n{service}Restart=always\n")


def quadlet(tmp_path: Path, files: dict[str, str],
            commands: list[tuple[list[str], str, int]] | None = None,
            model: HostModel | None = None
            ) -> tuple[RecipeContext, HostModel, dict[str, Server]]:
    return discover(_quadlet, snapshot(tmp_path, files, commands), model)


def env(s: Server) -> dict[str, str]:
    return {k: v.value for k, v in s.env.items()}


def test_a_container_file_is_its_service(tmp_path: Path) -> None:
    ctx, model, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit()})
    assert list(servers) == ["llm.service"]
    s = servers["llm.service"]
    path = "/etc/containers/systemd/llm.container"
    assert (s.path, s.files, s.runtime, s.container_name) == (path, [path], "podman",
                                                             "systemd-llm")
    assert s.argv == ["vllm", "serve", "--model", "/models/m"]  # the image's entrypoint
    assert (s.argv_source, s.argv_line) == (path, 5)  # the Image= line
    assert cited(ctx, s.argv_evidence[0]) == (f"{path}:5", f"Image={IMAGE}")
    assert s.log_argv == ["journalctl", "-u", "llm.service", "-n", "2000", "--no-pager"]
    assert (f"a Podman Quadlet unit: systemd's generator makes llm.service from {path}"
            in s.notes)
    assert model.looked_in == ["Podman Quadlet files (/run/containers/systemd, "
                               "/etc/containers/systemd, /usr/share/containers/systemd/"
                               "*.container)"]


def _unit_server(name: str, path: str) -> Server:
    return Server(name=name, path=path, files=[path], argv=["vllm", "serve"], argv_source=path,
                  argv_line=1, argv_evidence=[], env={})


def test_etc_shadows_usr_share_and_a_unit_file_shadows_both(tmp_path: Path) -> None:
    files = {"run/containers/systemd/r.container": unit().replace("/models/m", "/models/run"),
             f"{ETC}/r.container": unit(),
             f"{ETC}/a.container": unit().replace("/models/m", "/models/etc"),
             f"{USR}/a.container": unit().replace("/models/m", "/models/usr"),
             f"{USR}/b.container": unit().replace("/models/m", "/models/b"),
             f"{USR}/0.container": unit(), f"{ETC}/d.container": unit()}
    model = HostModel()
    model.servers += [_unit_server("0.service", "/etc/systemd/system/0.service"),
                      _unit_server("d.service", "/run/systemd/system/d.service")]
    _, _, servers = quadlet(tmp_path, files, model=model)
    assert sorted(servers) == ["a.service", "b.service", "r.service"]  # after 0.container too
    assert servers["a.service"].argv[-1] == "/models/etc"
    assert servers["r.service"].argv[-1] == "/models/run"
    assert servers["b.service"].path == "/usr/share/containers/systemd/b.container"
    assert [s.name for s in model.servers] == ["0.service", "d.service"]


# systemd.unit(5) "Unit File Load Path": /etc/systemd/system and /run/systemd/system come
# before the generator's /run/systemd/generator; /usr/local/lib and /usr/lib after it
# (podman-systemd.unit(5): "existing vendor services (i.e., in /usr/) are replaced"). Failed
# before: every unit of the name hid the generated one.
@pytest.mark.parametrize("vendor", ["/usr/lib/systemd/system/llm.service",
                                    "/usr/local/lib/systemd/system/llm.service",
                                    "/lib/systemd/system/llm.service"])
def test_a_vendor_unit_is_replaced_by_the_generated_one(tmp_path: Path, vendor: str) -> None:
    model = HostModel()
    model.servers.append(_unit_server("llm.service", vendor))
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit()}, model=model)
    assert servers["llm.service"].path == "/etc/containers/systemd/llm.container"
    assert model.servers == []  # the vendor unit is not the server any more
    assert (f"{vendor} is hidden by the generated llm.service (systemd.unit(5): "
            "/run/systemd/generator comes first)") in servers["llm.service"].notes


@pytest.mark.parametrize(("container", "name"), [
    ("ContainerName=vllm\n", "vllm"),
    ("ContainerName=first\nContainerName=second\n", "second"),  # Lookup: the last line
    ("", "systemd-llm"),
])
def test_the_container_name(tmp_path: Path, container: str, name: str) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(container)})
    assert servers["llm.service"].container_name == name


def test_no_image_no_service_and_the_last_image_wins(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {
        f"{ETC}/none.container": "[Container]\nExec=--model /m\n",
        f"{ETC}/two.container": unit(f"Image={IMAGE}\n", image="docker.io/library/nginx")})
    assert list(servers) == ["two.service"]
    assert servers["two.service"].argv_line == 6  # the second Image= line
    assert servers["two.service"].argv == ["vllm", "serve", "--model", "/models/m"]


def test_environment_files_and_precedence(tmp_path: Path) -> None:
    files = {
        f"{ETC}/llm.container": unit(
            'Environment=NCCL_ALGO=Ring "NCCL_DEBUG=INFO WARN"\n'
            "EnvironmentFile=llm.env\n"  # relative to the unit file's directory
            "EnvironmentFile=/etc/vllm/a.env\n"
            "Environment=NCCL_ALGO=Tree\n",
            service="Environment=NCCL_PROTO=LL128\n"),
        f"{ETC}/llm.env": "NCCL_ALGO=NVLS\nNCCL_IB_HCA=mlx5\n",
        "etc/vllm/a.env": "NCCL_SOCKET_IFNAME=eth0\n"}
    _, _, servers = quadlet(tmp_path, files)
    s = servers["llm.service"]
    assert env(s) == {"NCCL_ALGO": "Tree", "NCCL_DEBUG": "INFO WARN", "NCCL_IB_HCA": "mlx5",
                      "NCCL_SOCKET_IFNAME": "eth0"}
    assert s.env["NCCL_IB_HCA"].source == "/etc/containers/systemd/llm.env"
    # the unit's [Service] Environment= is the podman CLI's: not the container's
    assert any("NCCL_PROTO=LL128" in p and "does not pass it into the container" in p
               for p in s.problems)
    assert any("(/etc/containers/systemd/llm.container:13)" in p for p in s.problems)


def test_a_bare_env_takes_the_units_service_environment(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(
        "PodmanArgs=--ipc=host --env NCCL_ALGO\n", service="Environment=NCCL_ALGO=Tree\n")})
    s = servers["llm.service"]
    assert env(s) == {"NCCL_ALGO": "Tree"}
    assert "from the unit's NCCL_ALGO" in s.env["NCCL_ALGO"].origin
    assert any("IPC mode host" in n for n in s.notes)


@pytest.mark.parametrize(("value", "reaches"), [
    ("yes", True), ("True", True), ("on", True), ("1", True),
    ("no", False), ("0", False), ("false", False),
])
def test_environment_host_is_a_boolean(tmp_path: Path, value: str, reaches: bool) -> None:
    ctx, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(
        f"EnvironmentHost={value}\n", service="Environment=NCCL_ALGO=Tree\n")})
    s = servers["llm.service"]
    assert env(s) == ({"NCCL_ALGO": "Tree"} if reaches else {})
    if reaches:  # the unit's own line: [Service] Environment= (line 10)
        got = s.env["NCCL_ALGO"]
        assert (got.source, got.line) == ("/etc/containers/systemd/llm.container", 10)
        assert cited(ctx, got.evidence[0]) == ("/etc/containers/systemd/llm.container:10",
                                               "Environment=NCCL_ALGO=Tree")


def test_volumes_devices_shm_and_podman_args(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(
        "Volume=/models:/models:ro\nAddDevice=nvidia.com/gpu=all\nShmSize=16g\n"
        "PodmanArgs=--volume /srv/cache:/root/.cache\n")})
    s = servers["llm.service"]
    assert s.mounts == {"/models": "/models", "/srv/cache": "/root/.cache"}
    assert s.gpus == "nvidia.com/gpu=all"
    assert any("/dev/shm 16g" in n for n in s.notes)


def test_exec_words_follow_the_image(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit().replace(
        "Exec=--model /models/m", "Exec=--model '/models/my model' --tensor-parallel-size 8")})
    assert servers["llm.service"].argv == ["vllm", "serve", "--model", "/models/my model",
                                           "--tensor-parallel-size", "8"]


def test_a_container_without_an_engine_is_no_server(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/web.container": (
        "[Container]\nImage=docker.io/library/nginx:1.27\nExec=nginx -g 'daemon off;'\n")})
    assert servers == {}


def test_unreadable_and_malformed_files_are_said(tmp_path: Path) -> None:
    (tmp_path / ETC / "dir.container").mkdir(parents=True)  # listed, not readable as a file
    _, model, servers = quadlet(tmp_path, {f"{ETC}/bad.container": "[Container\nImage=x\n"})
    assert servers == {}
    assert "/etc/containers/systemd/dir.container could not be read" in model.problems
    assert any("/etc/containers/systemd/bad.container:1" in p
               and "the Quadlet unit bad.service is not established" in p
               for p in model.problems)


def test_the_units_state_from_systemctl(tmp_path: Path) -> None:
    listing = "llm.service loaded active running LLM\nother.service loaded failed failed x\n"
    ctx, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit()},
                              [(LIST_UNITS, listing, 0)])
    st = servers["llm.service"].state
    assert (st.value, st.detail) == ("running", "systemctl list-units: active (running)")
    assert cited(ctx, st.evidence[0])[1] == "llm.service loaded active running LLM"


def test_a_failed_listing_gives_no_state(tmp_path: Path) -> None:
    listing = "llm.service loaded active running LLM\n"
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit()},
                            [(LIST_UNITS, listing, 1)])
    assert servers["llm.service"].state.value == "unknown"


# quadlet reads each key its own way (quadlet.go): LookupLastArgs for Exec=, LookupBoolean
# (the last line) for EnvironmentHost=, Lookup (the last line; empty means the default) for
# ContainerName= and Entrypoint=, LookupAllArgs / LookupAllStrv (every line, split into words)
# for EnvironmentFile= and AddDevice=. Each case failed before _quadlet read them so.
def test_only_the_last_exec_line_counts(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(
        "Exec=--model /models/old\n")})
    assert servers["llm.service"].argv == ["vllm", "serve", "--model", "/models/m"]


def test_the_last_environment_host_line_counts(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(
        "EnvironmentHost=yes\nEnvironmentHost=no\n", service="Environment=NCCL_ALGO=Tree\n")})
    assert env(servers["llm.service"]) == {}


def test_an_empty_container_name_is_the_default(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit("ContainerName=\n")})
    assert servers["llm.service"].container_name == "systemd-llm"


def test_several_env_files_and_devices_on_one_line(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {
        f"{ETC}/llm.container": unit("EnvironmentFile=a.env /etc/vllm/b.env\n"
                                     "AddDevice=/dev/nvidia0 /dev/nvidia1\n"),
        f"{ETC}/a.env": "NCCL_ALGO=Ring\n", "etc/vllm/b.env": "NCCL_PROTO=Simple\n"})
    s = servers["llm.service"]
    assert env(s) == {"NCCL_ALGO": "Ring", "NCCL_PROTO": "Simple"}
    assert s.gpus == "/dev/nvidia0; /dev/nvidia1"


def test_entrypoint_replaces_the_images(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(
        "Entrypoint=/bin/true\nEntrypoint=python3\n").replace(
        "Exec=--model", "Exec=-m vllm.entrypoints.openai.api_server --model")})
    assert servers["llm.service"].argv == ["python3", "-m", "vllm.entrypoints.openai.api_server",
                                           "--model", "/models/m"]


def test_no_image_and_rootfs_and_bad_quoting_are_said(tmp_path: Path) -> None:
    _, model, servers = quadlet(tmp_path, {
        f"{ETC}/empty.container": unit("Image=\n"),  # the last Image= is empty: none
        f"{ETC}/root.container": "[Container]\nRootfs=/srv/rootfs\nExec=vllm serve /m\n",
        f"{ETC}/quote.container": unit().replace("Exec=--model", "Exec=--model '/unclosed")})
    assert servers == {}
    ours = sorted(p for p in model.problems if p.startswith("/etc/containers/systemd/"))
    assert ours[0] == ("/etc/containers/systemd/empty.container: no Image=: quadlet "
                       "generates no empty.service from it")
    assert ours[1] == ("/etc/containers/systemd/quote.container: No closing quotation in a "
                       "[Container] value: the Quadlet unit quote.service is not established")
    assert ours[2] == ("/etc/containers/systemd/root.container: runs the root filesystem "
                       "/srv/rootfs (Rootfs=), not an image: the command of root.service is "
                       "not established")


# podman-systemd.unit(5) "Enabling unit files": the generator applies [Install] itself
# (WantedBy, RequiredBy, UpheldBy start it; Alias only names it). Failed before: a quadlet was
# judged by links under /etc/systemd/system, which a generated unit never has.
@pytest.mark.parametrize(("install", "enabled"), [
    ("[Install]\nWantedBy=multi-user.target\n", True),
    ("[Install]\nWantedBy=multi-user.target\nAlias=m.service\nRequiredBy=llm.target\n", True),
    ("[Install]\nRequiredBy=llm.target\n", True),
    ("[Install]\nUpheldBy=llm.target\n", True),
    ("[Install]\nAlias=model.service\n", False),
    ("[Install]\nWantedBy=\n", False),
    ("", False),
])
def test_install_section_is_what_enables_it(tmp_path: Path, install: str,
                                            enabled: bool) -> None:
    files = [(["systemctl", "list-unit-files", "--type=service", "--no-legend"],
              "llm.service generated -\n", 0)]
    ctx, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit() + install}, files)
    st = servers["llm.service"].state
    assert st.enabled is enabled
    if enabled:
        keys = [k for k in install.split("\n")[1:] if k and not k.startswith("Alias")]
        assert st.enabled_detail == (", ".join(f"[Install] {k}" for k in keys)
                                     + ": quadlet's generator links it")
        assert [cited(ctx, e) for e in st.enabled_evidence] == [
            (f"/etc/containers/systemd/llm.container:{11 + install.split(chr(10)).index(k) - 1}",
             k) for k in keys]
        assert ctx.box.evidence[st.enabled_evidence[0]].sha256 == sha256(
            keys[0].encode()).hexdigest()
    else:
        assert st.enabled_detail == ("no [Install] WantedBy=, RequiredBy= or UpheldBy=: "
                                     "quadlet's generator starts it with nothing")
        assert st.enabled_evidence == []


# quadlet.go handleStorageSource: a Volume= source starting with "." is relative to the unit
# file's directory; systemd.exec(5): a system unit without WorkingDirectory= runs in /, so a
# relative --env-file in PodmanArgs= is read from there. Failed before: the source was kept
# relative (no mount) and PodmanArgs' env file was read from the unit file's directory.
def test_relative_paths_in_volume_and_podman_args(tmp_path: Path) -> None:
    files = {f"{ETC}/llm.container": unit("Volume=./models:/models:ro\n"
                                          "PodmanArgs=--env-file run.env\n"),
             f"{ETC}/run.env": "NCCL_ALGO=Wrong\n", "run.env": "NCCL_ALGO=Ring\n",
             "srv/llm/run.env": "NCCL_ALGO=Tree\n"}
    _, _, servers = quadlet(tmp_path, files)
    s = servers["llm.service"]
    assert s.mounts == {"/etc/containers/systemd/models": "/models"}
    assert env(s) == {"NCCL_ALGO": "Ring"}
    files[f"{ETC}/llm.container"] = unit("PodmanArgs=--env-file run.env\n",
                                         service="WorkingDirectory=/srv/llm\n")
    _, _, servers = quadlet(tmp_path / "b", files)
    assert env(servers["llm.service"]) == {"NCCL_ALGO": "Tree"}


def test_other_service_keys_are_not_the_clis_environment(tmp_path: Path) -> None:
    # systemd.service(5): ExecStartPre= runs its own command; it sets nothing for ExecStart=
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(
        "PodmanArgs=--env NCCL_DEBUG\n",
        service="ExecStartPre=/usr/bin/env NCCL_DEBUG=INFO /bin/true\n")})
    s = servers["llm.service"]
    assert env(s) == {}
    assert not any("NCCL_DEBUG=INFO" in p for p in s.problems)


def test_citations_show_the_whole_assignment(tmp_path: Path) -> None:
    # a value on a continuation line is cited with it (systemd.syntax(7): a trailing
    # backslash joins the next line); Image= on the file's last line is cited too
    text = ("[Container]\nEnvironmentHost=yes\n"
            "[Service]\nEnvironment=NCCL_ALGO=Tree \\\n  NCCL_PROTO=LL128\n"
            f"[Container]\nImage={IMAGE}")
    ctx, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": text})
    s = servers["llm.service"]
    path = "/etc/containers/systemd/llm.container"
    assert env(s) == {"NCCL_ALGO": "Tree", "NCCL_PROTO": "LL128"}
    assert cited(ctx, s.env["NCCL_PROTO"].evidence[0]) == (
        f"{path}:4", "Environment=NCCL_ALGO=Tree \\\nNCCL_PROTO=LL128")
    assert cited(ctx, s.argv_evidence[0]) == (f"{path}:7", f"Image={IMAGE}")


def test_an_option_not_understood_is_said(tmp_path: Path) -> None:
    _, model, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(
        "PodmanArgs=--frobnicate\n")})
    assert servers == {}
    assert any(p.startswith("llm.service (/etc/containers/systemd/llm.container:5): its "
                            "`podman run` line is not understood (option --frobnicate")
               for p in model.problems)


@pytest.mark.parametrize(("volume", "mounts"), [
    ("hf-cache:/root/.cache", {}),  # a named volume, not a host path
    ("./m:/srv/../models:ro", {"/etc/containers/systemd/m": "/srv/../models"}),  # source only
    ("/models:/models", {"/models": "/models"}),
])
def test_volume_sources(tmp_path: Path, volume: str, mounts: dict[str, str]) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit(f"Volume={volume}\n")})
    assert servers["llm.service"].mounts == mounts


def test_without_exec_the_image_runs_its_own_command(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {f"{ETC}/llm.container": unit().replace(
        "Exec=--model /models/m\n", "")})
    assert servers["llm.service"].argv == ["vllm", "serve"]


def test_an_entrypoint_script_mounted_from_the_host_is_followed(tmp_path: Path) -> None:
    _, _, servers = quadlet(tmp_path, {
        f"{ETC}/llm.container": unit("Volume=/srv/llm:/app:ro\nEntrypoint=/app/start.sh\n"),
        "srv/llm/start.sh": "#!/bin/bash\nexport NCCL_ALGO=Ring\nexec vllm serve \"$@\"\n"})
    s = servers["llm.service"]
    assert s.argv == ["vllm", "serve", "--model", "/models/m"]
    assert env(s) == {"NCCL_ALGO": "Ring"}
