"""The Compose runtime (``_hostmodel/runtimes/_compose.py``) called directly on small
snapshots: compose files read offline, each rule from the Compose specification and Docker's
documentation, written before running:
- project name: the top-level ``name``, else the directory's name, lower-cased with every
  character but ``a-z 0-9 _ -`` dropped (compose-go ``NormalizeProjectName``); a service's
  container is ``<project>-<service>-1`` unless ``container_name`` says otherwise;
- ``env_file`` paths are relative to the compose file's directory, later files override
  earlier ones, ``environment`` overrides them all; ``required: false`` (long syntax) makes a
  missing file no error; a list entry ``NAME`` without ``=`` takes the shell's value;
- an override file (``compose.override.yaml``) in the same directory is merged over the main
  one: ``environment`` by key, single values (``command``, ``image``) replaced;
- a string ``command`` is split like a shell would; without ``entrypoint`` the image's runs;
- ``restart: always`` / ``unless-stopped`` restart with the daemon, ``no`` (the default) and
  ``on-failure`` do not; a service with ``profiles`` starts only when a profile is asked for;
- GPUs: ``deploy.resources.reservations.devices`` (``capabilities: [gpu]``, ``count`` a number
  or ``all``, or ``device_ids``), or the service-level ``gpus``;
- volumes: short syntax ``SRC:DST[:MODE]`` is a bind mount when SRC is a path (``.``/``/``),
  a named volume otherwise; long syntax ``type: bind``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit._hostmodel._model import HostModel, Server, Setting
from agentkit._hostmodel.runtimes import _compose

from .runtimes_snap import cited, discover, snapshot

SERVE = "    image: vllm/vllm-openai:v0.11.0\n    command: --model /models/m\n"


def compose(tmp_path: Path, files: dict[str, str], model: HostModel | None = None,
            manifest_dirs: list[str] | None = None
            ) -> tuple[object, HostModel, dict[str, Server]]:
    host = snapshot(tmp_path, files, manifest_dirs=manifest_dirs)
    return discover(_compose, host, model)


def test_project_and_container_names(tmp_path: Path) -> None:
    _, model, servers = compose(tmp_path, {
        "opt/My.LLM_App/compose.yaml": f"services:\n  vllm:\n{SERVE}",
        "srv/named/docker-compose.yml": f"name: Serving\nservices:\n  b:\n{SERVE}",
        "root/fixed/compose.yml": f"services:\n  c:\n{SERVE}    container_name: llm\n"})
    assert sorted(servers) == ["llm", "myllm_app-vllm-1", "serving-b-1"]
    s = servers["myllm_app-vllm-1"]
    assert (s.runtime, s.path, s.files) == ("compose", "/opt/My.LLM_App/compose.yaml",
                                            ["/opt/My.LLM_App/compose.yaml"])
    assert model.looked_in == ["Docker Compose files (/opt/*/{compose,docker-compose}.y*ml, "
                               "/srv/*/{compose,docker-compose}.y*ml, "
                               "/root/*/{compose,docker-compose}.y*ml, …)"]
    assert any("project myllm_app, service vllm" in n for n in s.notes)


def test_every_place_compose_files_are_looked_for(tmp_path: Path) -> None:
    files = {f"{d}/compose.yaml": f"services:\n  s{n}:\n{SERVE}" for n, d in enumerate(
        ["opt/a", "srv/b", "root/c", "home/u/d", "etc/docker/compose/e", "data/given"])}
    _, _, servers = compose(tmp_path, files, manifest_dirs=["/data/given/"])
    assert sorted(servers) == ["a-s0-1", "b-s1-1", "c-s2-1", "d-s3-1", "e-s4-1", "given-s5-1"]


def test_a_file_without_an_engine_is_skipped(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/web/compose.yaml": "services:\n  web:\n    image: nginx\n",
        "opt/mixed/compose.yaml": f"services:\n  cache:\n    image: redis:7\n  vllm:\n{SERVE}"})
    assert sorted(servers) == ["mixed-vllm-1"]


def test_the_command_and_entrypoint(tmp_path: Path) -> None:
    ctx, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n"
        "  a:\n    image: vllm/vllm-openai:v0.11.0\n"
        "    command: --model \"/models/a b\" --tensor-parallel-size 2\n"
        "  b:\n    image: my/own:1\n    entrypoint: [\"python3\", \"-m\", "
        "\"vllm.entrypoints.openai.api_server\"]\n    command: [\"--model\", \"/models/b\"]\n"
        "  c:\n    image: vllm/vllm-openai:latest\n    command: vllm serve /models/c\n")})
    a = servers["llm-a-1"]
    assert a.argv == ["vllm", "serve", "--model", "/models/a b", "--tensor-parallel-size", "2"]
    # flags alone: either ENTRYPOINT the image has had runs vLLM's server with them
    assert any("both run vLLM's OpenAI server" in n for n in a.notes)
    assert (a.argv_source, a.argv_line) == ("/opt/llm/compose.yaml", 4)
    assert cited(ctx, a.argv_evidence[0]) == (
        "/opt/llm/compose.yaml:4",
        'command: --model "/models/a b" --tensor-parallel-size 2')
    b = servers["llm-b-1"]
    assert b.argv == ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model",
                      "/models/b"]
    assert b.argv_line == 8  # the command's line
    # `vllm serve …` is the image ENTRYPOINT's arguments (Docker's rule), which vLLM refuses
    # after either ENTRYPOINT the image has had; no capture shows which: not established
    c = servers["llm-c-1"]
    assert c.argv == ["vllm", "serve", "/models/c"]
    assert [p for p in c.argv_problems if p.startswith("/opt/llm/compose.yaml:11: ")
            and p.endswith("not established")]


def test_an_entrypoint_alone_is_cited(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  a:\n    image: x/y\n    entrypoint: vllm serve /models/a\n")})
    assert (servers["llm-a-1"].argv, servers["llm-a-1"].argv_line) == (
        ["vllm", "serve", "/models/a"], 4)


def test_a_command_with_an_unclosed_quote_is_split_on_spaces(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  a:\n    entrypoint: vllm serve\n    command: --model '/models/a\n")})
    assert servers["llm-a-1"].argv == ["vllm", "serve", "--model", "'/models/a"]


def test_an_unknown_image_without_a_command_says_so(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  a:\n    image: acme/vllm-server:1\n    command: --model /m\n")})
    assert servers == {}  # nothing shows what it starts: not guessed


def test_environment_wins_over_env_files_and_later_files_win(tmp_path: Path) -> None:
    ctx, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": (
            "services:\n  vllm:\n" + SERVE + "    env_file:\n      - a.env\n"
            "      - conf/b.env\n    environment:\n      NCCL_ALGO: Tree\n"),
        "opt/llm/a.env": "NCCL_PROTO=LL\nNCCL_ALGO=Ring\nNCCL_IB_HCA=mlx5\n",
        "opt/llm/conf/b.env": "# later\nNCCL_PROTO=Simple\n"})
    env = servers["llm-vllm-1"].env
    got = {k: (v.value, v.source, v.line, v.origin) for k, v in env.items()}
    assert got == {
        "NCCL_PROTO": ("Simple", "/opt/llm/conf/b.env", 2, "compose env_file"),
        "NCCL_ALGO": ("Tree", "/opt/llm/compose.yaml", 9, "compose environment"),
        "NCCL_IB_HCA": ("mlx5", "/opt/llm/a.env", 3, "compose env_file")}
    assert cited(ctx, env["NCCL_PROTO"].evidence[0]) == ("/opt/llm/conf/b.env:2",
                                                         "NCCL_PROTO=Simple")
    assert cited(ctx, env["NCCL_ALGO"].evidence[0]) == ("/opt/llm/compose.yaml:9",
                                                        "NCCL_ALGO: Tree")


def test_a_missing_env_file_is_said_unless_not_required(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  vllm:\n" + SERVE + "    env_file:\n      - gone.env\n"
        "      - path: optional.env\n        required: false\n"
        "      - path: needed.env\n        required: true\n")})
    notes = servers["llm-vllm-1"].notes
    said = [n for n in notes if n.startswith("env_file ")]
    assert said == [
        "env_file /opt/llm/gone.env could not be read: its variables are unknown",
        "env_file /opt/llm/needed.env could not be read: its variables are unknown"]


def test_a_single_env_file_string(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE + "    env_file: nccl.env\n",
        "opt/llm/nccl.env": "NCCL_PROTO=LL\n"})
    assert servers["llm-vllm-1"].env["NCCL_PROTO"].value == "LL"


def test_a_list_entry_without_a_value_comes_from_the_shell(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  vllm:\n" + SERVE + "    environment:\n      - NCCL_PROTO\n"
        "      - NCCL_ALGO=Ring\n      - EMPTY=\n")})
    s = servers["llm-vllm-1"]
    assert "NCCL_PROTO" not in s.env
    assert "NCCL_PROTO takes its value from the shell that ran compose: unknown" in s.notes
    assert (s.env["NCCL_ALGO"].value, s.env["NCCL_ALGO"].line) == ("Ring", 7)
    assert (s.env["EMPTY"].value, s.env["EMPTY"].line) == ("", 8)


def test_interpolation_from_the_project_dotenv(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": (
            "services:\n  vllm:\n    image: vllm/vllm-openai:v0.11.0\n"
            "    command: --model ${MODEL} --kv-cache-dtype ${KV:-auto} --x $$HOME\n"
            "    environment:\n      NCCL_ALGO: ${ALGO}\n      NCCL_PROTO: ${PROTO:-LL}\n"
            "      NCCL_BAD: ${BAD\n"),
        "opt/llm/.env": "MODEL=/models/m\nALGO=Tree\n"})
    s = servers["llm-vllm-1"]
    assert s.argv == ["vllm", "serve", "--model", "/models/m", "--kv-cache-dtype", "auto",
                      "--x", "$HOME"]
    assert s.env["NCCL_ALGO"].value == "Tree"
    assert s.env["NCCL_PROTO"].value == "LL"
    assert s.env["NCCL_BAD"].value == "${BAD"  # compose refuses it: kept as written
    assert ("NCCL_PROTO (/opt/llm/compose.yaml:7) depends on PROTO, which the project's .env "
            "does not set: taken as unset in the shell that ran compose, which is not "
            "established") in s.notes
    assert not any(n.startswith("NCCL_ALGO (") for n in s.notes)
    assert any(n.startswith("NCCL_BAD (/opt/llm/compose.yaml:8) depends on '${BAD' (")
               for n in s.notes)


def test_an_env_file_may_use_the_dotenv_and_names_what_it_lacks(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE + "    env_file: n.env\n",
        "opt/llm/n.env": "NCCL_ALGO=${ALGO}\nNCCL_PROTO=${PROTO}\nNCCL_X=plain\n",
        "opt/llm/.env": "ALGO=Tree\n"})
    s = servers["llm-vllm-1"]
    assert (s.env["NCCL_ALGO"].value, s.env["NCCL_PROTO"].value) == ("Tree", "")
    said = [n for n in s.notes if "may depend on" in n]
    assert said == ["NCCL_PROTO (/opt/llm/n.env:2) may depend on PROTO, which the project's "
                    ".env does not set: taken as unset in the shell that ran compose, which "
                    "is not established"]


def test_an_env_file_compose_refuses_gives_nothing(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE + "    env_file: n.env\n",
        "opt/llm/n.env": "NCCL_ALGO=Ring\nNCCL_PROTO='unclosed\n"})
    s = servers["llm-vllm-1"]
    assert "NCCL_ALGO" not in s.env
    assert any(n.startswith("env_file /opt/llm/n.env: nothing: compose refuses the file (")
               for n in s.notes)


def test_an_override_file_is_merged_over_the_main_one(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": (
            "services:\n  vllm:\n" + SERVE + "    environment:\n      - NCCL_ALGO=Ring\n"
            "      - NCCL_PROTO=LL\n"),
        "opt/llm/compose.override.yml": (
            "services:\n  vllm:\n    command: --model /models/other\n"
            "    environment:\n      NCCL_PROTO: Simple\n")})
    s = servers["llm-vllm-1"]
    assert s.argv == ["vllm", "serve", "--model", "/models/other"]
    assert {k: v.value for k, v in s.env.items()} == {"NCCL_ALGO": "Ring",
                                                      "NCCL_PROTO": "Simple"}
    assert list(servers) == ["llm-vllm-1"]  # the override is no project of its own


def test_an_override_that_is_not_a_mapping_changes_nothing(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE,
        "opt/llm/docker-compose.override.yaml": "services:\n  vllm: [1, 2]\n"})
    assert servers["llm-vllm-1"].argv == ["vllm", "serve", "--model", "/models/m"]


@pytest.mark.parametrize(("restart", "enabled"), [
    ("always", True), ("unless-stopped", True), ("on-failure", False), ("no", False),
    (None, False)])
def test_restart_policy_is_whether_it_comes_back(tmp_path: Path, restart: str | None,
                                                 enabled: bool) -> None:
    extra = f"    restart: {restart}\n" if restart else ""
    ctx, _, servers = compose(tmp_path, {"opt/llm/compose.yaml":
                                         "services:\n  vllm:\n" + SERVE + extra})
    st = servers["llm-vllm-1"].state
    assert (st.value, st.enabled) == ("unknown", enabled)
    assert st.enabled_detail == f"restart: {restart or 'no'}"
    assert st.detail == "declared in a compose file; whether it runs is not shown"
    if restart:
        assert cited(ctx, st.enabled_evidence[0]) == ("/opt/llm/compose.yaml:5",
                                                      f"restart: {restart}")
    else:
        assert st.enabled_evidence == []


def test_a_service_in_a_profile_is_not_started_by_default(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  vllm:\n" + SERVE + "    restart: always\n    profiles: [gpu, big]\n")})
    st = servers["llm-vllm-1"].state
    assert (st.enabled, st.enabled_detail) == (
        False, "in profile gpu, big: started only when that profile is asked for")


@pytest.mark.parametrize(("devices", "gpus"), [
    ("            - driver: nvidia\n              count: 2\n              capabilities: [gpu]\n",
     "2 GPUs"),
    ("            - capabilities: [gpu]\n              count: all\n", "all GPUs"),
    ("            - driver: nvidia\n              device_ids: ['0', '3']\n", "GPUs 0,3"),
    ("            - driver: other\n              capabilities: [tpu]\n", ""),
])
def test_gpus_from_device_reservations(tmp_path: Path, devices: str, gpus: str) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  vllm:\n" + SERVE + "    deploy:\n      resources:\n        reservations:\n"
        "          devices:\n" + devices)})
    assert servers["llm-vllm-1"].gpus == gpus


def test_gpus_attribute(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml":
                                       "services:\n  vllm:\n" + SERVE + "    gpus: all\n"})
    assert servers["llm-vllm-1"].gpus == "gpus: all"


def test_bind_mounts_map_host_paths(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  vllm:\n" + SERVE + "    volumes:\n      - /data/models:/models:ro\n"
        "      - ./cache:/root/.cache\n      - hfcache:/hf\n      - /plain\n"
        "      - type: bind\n        source: ../shared\n        target: /shared\n"
        "      - type: volume\n        source: vol\n        target: /vol\n")})
    assert servers["llm-vllm-1"].mounts == {"/data/models": "/models",
                                            "/opt/llm/cache": "/root/.cache",
                                            "/opt/shared": "/shared"}


def test_a_file_a_unit_starts_is_read_wherever_it_is(tmp_path: Path) -> None:
    model = HostModel()
    model.compose_units["/data/app/stack.yaml"] = "llm.service"
    _, _, servers = compose(tmp_path, {"data/app/stack.yaml": (
        "services:\n  vllm:\n" + SERVE + "    restart: always\n")}, model)
    st = servers["app-vllm-1"].state
    assert "started by systemd unit llm.service (`docker compose up`)" in \
        servers["app-vllm-1"].notes
    assert (st.enabled, st.enabled_detail) == (
        None, "started at boot by llm.service if that unit is enabled")


def _running(name: str, env: dict[str, str], project: str = "", service: str = "") -> Server:
    s = Server(name=name, path="x", files=[], argv=[], argv_source="x", argv_line=0,
               argv_evidence=[], runtime="docker",
               env={k: Setting(k, v, "docker inspect", 0, []) for k, v in env.items()})
    s.compose_project, s.compose_service = project, service
    return s


@pytest.mark.parametrize("by", ["labels", "name"])
def test_an_inspected_container_is_the_authority_and_drift_is_named(tmp_path: Path,
                                                                    by: str) -> None:
    running = (_running("whatever", {}, "llm", "vllm") if by == "labels"
               else _running("llm-vllm-1", {}))
    running.env = {k: Setting(k, v, "docker inspect", 0, []) for k, v in {
        "NCCL_PROTO": "LL", "NCCL_ALGO": "Tree", "NCCL_IB_HCA": "mlx5", "NCCL_DEBUG": "INFO",
        "HOME": "/root"}.items()}
    model = HostModel()
    model.servers.append(running)
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  vllm:\n" + SERVE + "    environment:\n      NCCL_PROTO: Simple\n"
        "      NCCL_ALGO: Tree\n      NCCL_P2P_LEVEL: NVL\n      NCCL_DEBUG: WARN\n")}, model)
    assert servers == {}
    assert running.problems == [
        "NCCL_IB_HCA=mlx5 is in the running container " + running.name + " but "
        "/opt/llm/compose.yaml no longer declares it (unless the image sets it): the next "
        "`docker compose up -d` recreates the container without it",
        "NCCL_P2P_LEVEL=NVL is declared in /opt/llm/compose.yaml:8 but not in the running "
        f"container {running.name} (it does not have it): the file was changed after the "
        "container was created, and needs `docker compose up -d` (which recreates it) to "
        "apply",
        "NCCL_PROTO=Simple is declared in /opt/llm/compose.yaml:6 but not in the running "
        f"container {running.name} (it has 'LL'): the file was changed after the container "
        "was created, and needs `docker compose up -d` (which recreates it) to apply"]


def test_services_a_file_cannot_describe_are_skipped(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": "services:\n  vllm: just-a-string\n  ok:\n" + SERVE,
        "opt/list/compose.yaml": "- vllm\n- sglang\n"})
    assert sorted(servers) == ["llm-ok-1"]


def test_a_listing_that_fails_or_a_file_that_cannot_be_read_is_skipped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit._sandbox import _files
    from agentkit._sandbox._tool import ToolError
    real = _files.glob_paths

    def glob_paths(ctx: Any, pattern: str, limit: int = 500) -> Any:
        if pattern.startswith("/srv/") or "override" in pattern:
            raise ToolError("refused: unreadable here")
        return real(ctx, pattern, limit)

    monkeypatch.setattr(_files, "glob_paths", glob_paths)
    host = snapshot(tmp_path, {"opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE,
                               "srv/x/compose.yaml": "services:\n  vllm:\n" + SERVE})
    (tmp_path / "opt/aaa").mkdir()
    (tmp_path / "opt/aaa/compose.yaml").symlink_to("/nowhere/compose.yaml")  # dangling
    (tmp_path / "opt/llm/compose.override.yaml").symlink_to("/nowhere/o.yaml")
    _, _, servers = discover(_compose, host)
    assert sorted(servers) == ["llm-vllm-1"]


def test_an_unreadable_override_changes_nothing(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {"opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE})
    (tmp_path / "opt/llm/compose.override.yaml").symlink_to("/nowhere/o.yaml")
    _, _, servers = discover(_compose, host)
    assert servers["llm-vllm-1"].argv == ["vllm", "serve", "--model", "/models/m"]


def test_a_file_without_an_engine_before_others_is_skipped(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/aaa-web/compose.yaml": "services:\n  web:\n    image: nginx\n",
        "opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE})
    assert sorted(servers) == ["llm-vllm-1"]


def test_an_override_may_add_the_environment(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE,
        "opt/llm/compose.override.yaml": ("services:\n  vllm:\n    environment:\n"
                                          "      NCCL_PROTO: Simple\n")})
    assert servers["llm-vllm-1"].env["NCCL_PROTO"].value == "Simple"


def test_what_a_service_note_says(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": ("services:\n  vllm:\n    image: vllm/vllm-openai:v1\n"
                                 "    command: vllm serve /models/c\n"
                                 "    environment:\n      NCCL_PROTO: ${PROTO}\n")})
    s = servers["llm-vllm-1"]
    unknown = ("NCCL_PROTO (/opt/llm/compose.yaml:6) depends on PROTO, which the project's "
               ".env does not set: taken as unset in the shell that ran compose, which is not "
               "established")
    assert s.notes == [unknown, "declared in /opt/llm/compose.yaml (project llm, service vllm);"
                       " no container was inspected, so whether it runs is not shown"]
    assert s.problems == [unknown]  # an NCCL setting this reading cannot tell
    # and `vllm serve` on the vLLM image without its config (the ENTRYPOINT is not shown)
    [doubt] = s.argv_problems
    assert doubt.startswith("/opt/llm/compose.yaml:4: ") and doubt.endswith("not established")
    assert (s.env["NCCL_PROTO"].name, s.env["NCCL_PROTO"].value) == ("NCCL_PROTO", "")


def test_drift_reads_the_declared_values_through_the_dotenv(tmp_path: Path) -> None:
    running = _running("llm-vllm-1", {"NCCL_ALGO": "Tree"})
    model = HostModel()
    model.servers.append(running)
    compose(tmp_path, {"opt/llm/compose.yaml": (
        "services:\n  vllm:\n" + SERVE + "    environment:\n      NCCL_ALGO: ${ALGO}\n"),
        "opt/llm/.env": "ALGO=Tree\n"}, model)
    assert running.problems == []


def test_settings_name_themselves(tmp_path: Path) -> None:
    _, _, servers = compose(tmp_path, {
        "opt/llm/compose.yaml": ("services:\n  vllm:\n" + SERVE + "    env_file: n.env\n"
                                 "    environment:\n      - NCCL_ALGO=Ring\n"),
        "opt/llm/n.env": "# c\nNCCL_PROTO=LL\n"})
    env = servers["llm-vllm-1"].env
    assert [(k, v.name) for k, v in env.items()] == [("NCCL_PROTO", "NCCL_PROTO"),
                                                      ("NCCL_ALGO", "NCCL_ALGO")]


@pytest.mark.parametrize("override", ["- vllm\n- other\n", "services: [vllm]\n"])
def test_an_override_compose_could_not_merge_changes_nothing(tmp_path: Path,
                                                             override: str) -> None:
    _, _, servers = compose(tmp_path, {"opt/llm/compose.yaml": "services:\n  vllm:\n" + SERVE,
                                       "opt/llm/compose.override.yaml": override})
    assert servers["llm-vllm-1"].argv == ["vllm", "serve", "--model", "/models/m"]
