"""The systemd runtime (``_hostmodel/runtimes/_systemd.py``) on small snapshots, called
directly (no investigation: each case is a few tool calls, so its mutation target is fast).

Expected values come from systemd's documentation, written before running:
- systemd.unit(5) "Unit File Load Path": /etc/systemd/system, then /run/systemd/system, then
  /usr/local/lib/systemd/system, then /lib and /usr/lib/systemd/system; a unit name found in an
  earlier directory hides the same name in a later one. Drop-ins live in ``<unit>.d/*.conf``.
- systemd.unit(5) "%i": the instance name of a template ``foo@.service`` started as
  ``foo@bar.service``; instances are enabled as links in ``*.wants/`` directories.
- systemd.service(5) ExecStart=: an empty assignment resets the list; a service without one
  does not start anything.
- systemctl(1) ``is-enabled`` table: ``enabled``, ``enabled-runtime`` and ``alias`` mean
  enabled (exit 0); ``disabled``, ``masked``, ``masked-runtime``, ``linked`` and
  ``linked-runtime`` do not (exit > 0).
- systemctl(1) ``list-units --plain --no-legend``: ``UNIT LOAD ACTIVE SUB DESCRIPTION``.
- journalctl(1) short output: ``Mon DD HH:MM:SS host ident[pid]: message``; systemd's own
  lifecycle messages ("Started …", "Main process exited, code=…", "Failed with result '…'",
  "Scheduled restart job, restart counter is at N").
- systemd.exec(5): DefaultEnvironment= of system.conf (and system.conf.d/*.conf) reaches every
  unit; Environment= of the unit and its drop-ins; EnvironmentFile=; User=.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentkit import Host
from agentkit._hostmodel._model import HostModel, Server
from agentkit._hostmodel.runtimes import _systemd
from agentkit._sandbox._context import RecipeContext

from .runtimes_snap import cited, snapshot
from .runtimes_snap import discover as _discover

SYS = "etc/systemd/system"
LIST_UNITS = ["systemctl", "list-units", "--type=service", "--all", "--no-legend", "--plain"]
LIST_FILES = ["systemctl", "list-unit-files", "--type=service", "--no-legend"]
VLLM = "[Service]\nExecStart=/usr/bin/vllm serve /models/m --tensor-parallel-size 2\n"


def journal(unit: str) -> list[str]:
    return ["journalctl", "-u", unit, "-n", "2000", "--no-pager"]


def discover(host: Host) -> tuple[RecipeContext, HostModel, dict[str, Server]]:
    return _discover(_systemd, host)


def test_an_earlier_unit_directory_hides_the_same_name_later(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {
        f"{SYS}/vllm.service": VLLM.replace("/models/m", "/models/etc"),
        "usr/lib/systemd/system/vllm.service": VLLM.replace("/models/m", "/models/usr"),
        "usr/lib/systemd/system/other.service": VLLM.replace("/models/m", "/models/other"),
        "run/systemd/system/late.service": VLLM.replace("/models/m", "/models/run")})
    _, model, servers = discover(host)
    assert sorted(servers) == ["late.service", "other.service", "vllm.service"]
    s = servers["vllm.service"]
    assert s.path == "/etc/systemd/system/vllm.service"
    assert s.argv == ["/usr/bin/vllm", "serve", "/models/etc", "--tensor-parallel-size", "2"]
    assert (s.argv_source, s.argv_line) == ("/etc/systemd/system/vllm.service", 2)
    assert servers["other.service"].path == "/usr/lib/systemd/system/other.service"
    assert servers["late.service"].path == "/run/systemd/system/late.service"
    assert s.log_argv == journal("vllm.service")
    assert (s.refused, s.unresolved, s.problems, s.ignored) == ("", [], [], [])
    assert s.user == "root"  # systemd.exec(5): without User=, system services run as root
    assert model.looked_in == ["systemd units (5 unit directories from /etc/systemd/system, "
                               "following start scripts)"]
    assert model.problems == []


def test_lib_is_read_before_usr_lib(tmp_path: Path) -> None:
    """Debian's systemd 252 lists /lib/systemd/system before /usr/lib/systemd/system
    (systemd-analyze unit-paths on a non-merged-usr build)."""
    host = snapshot(tmp_path, {
        "lib/systemd/system/vllm.service": VLLM.replace("/models/m", "/models/lib"),
        "usr/lib/systemd/system/vllm.service": VLLM.replace("/models/m", "/models/usr")})
    _, _, servers = discover(host)
    assert servers["vllm.service"].path == "/lib/systemd/system/vllm.service"


def test_a_server_started_only_by_a_drop_in_is_found(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {
        f"{SYS}/app.service": "[Service]\nExecStart=/usr/bin/sleep infinity\nUser=svc\n",
        f"{SYS}/app.service.d/override.conf":
            "[Service]\nExecStart=\nExecStart=/usr/bin/vllm serve /models/m\n"})
    _, _, servers = discover(host)
    s = servers["app.service"]
    assert s.argv == ["/usr/bin/vllm", "serve", "/models/m"]
    assert (s.argv_source, s.argv_line) == (f"/{SYS}/app.service.d/override.conf", 3)
    assert s.user == "svc"
    assert s.files == [f"/{SYS}/app.service", f"/{SYS}/app.service.d/override.conf"]


def test_an_exec_start_reset_by_a_drop_in_starts_nothing(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": VLLM,
                               f"{SYS}/vllm.service.d/off.conf": "[Service]\nExecStart=\n"})
    assert discover(host)[2] == {}


def test_a_unit_that_starts_no_engine_is_not_a_server(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/tick.service":
                               "[Service]\nExecStart=/bin/bash -c 'sleep 60'\n"})
    assert discover(host)[2] == {}


def test_template_instances_from_wants_links_and_loaded_units(tmp_path: Path) -> None:
    unit = "[Service]\nExecStart=/usr/bin/vllm serve /models/%i\n"
    host = snapshot(tmp_path, {
        f"{SYS}/vllm@.service": unit,
        f"{SYS}/multi-user.target.wants/vllm@llama.service": unit,
        f"{SYS}/multi-user.target.wants/other@x.service": unit.replace("vllm", "true"),
    }, [(LIST_UNITS, "vllm@qwen.service loaded active running vLLM qwen\n"
                     "vllmx@no.service loaded active running not an instance\n", 0)])
    _, _, servers = discover(host)
    assert sorted(servers) == ["vllm@llama.service", "vllm@qwen.service"]
    assert servers["vllm@llama.service"].argv == ["/usr/bin/vllm", "serve", "/models/llama"]
    assert servers["vllm@qwen.service"].argv == ["/usr/bin/vllm", "serve", "/models/qwen"]
    assert servers["vllm@qwen.service"].path == f"/{SYS}/vllm@.service"
    assert servers["vllm@qwen.service"].state.value == "running"


def test_a_template_with_no_instance_is_no_server(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm@.service":
                               "[Service]\nExecStart=/usr/bin/vllm serve /models/%i\n"},
                    [(LIST_UNITS, "vllm@.service loaded inactive dead template\n", 0)])
    assert discover(host)[2] == {}


def test_where_each_setting_comes_from(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {
        "etc/systemd/system.conf": "[Manager]\nDefaultEnvironment=NCCL_DEBUG=INFO\n",
        "etc/systemd/system.conf.d/10-nccl.conf": "[Manager]\nDefaultEnvironment=NCCL_ALGO=Ring\n",
        "etc/default/vllm": "NCCL_PROTO=Simple\n",
        f"{SYS}/vllm.service": ("[Service]\nEnvironment=NCCL_P2P_LEVEL=NVL\n"
                                "EnvironmentFile=/etc/default/vllm\n" + VLLM.split("\n", 1)[1]),
        f"{SYS}/vllm.service.d/20-nccl.conf": "[Service]\nEnvironment=NCCL_IB_DISABLE=1\n"})
    _, _, servers = discover(host)
    env = servers["vllm.service"].env
    origins = {k: (v.origin, v.source, v.line) for k, v in env.items()}
    assert origins == {
        "NCCL_DEBUG": ("DefaultEnvironment", "/etc/systemd/system.conf", 2),
        "NCCL_ALGO": ("DefaultEnvironment", "/etc/systemd/system.conf.d/10-nccl.conf", 2),
        "NCCL_PROTO": ("EnvironmentFile", "/etc/default/vllm", 1),
        "NCCL_P2P_LEVEL": ("unit", f"/{SYS}/vllm.service", 2),
        "NCCL_IB_DISABLE": ("drop-in", f"/{SYS}/vllm.service.d/20-nccl.conf", 2)}
    assert {k: v.value for k, v in env.items()}["NCCL_PROTO"] == "Simple"


def test_an_environment_file_named_conf_is_not_a_drop_in(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {
        "etc/vllm/nccl.conf": "NCCL_PROTO=LL\n",
        f"{SYS}/vllm.service": ("[Service]\nEnvironmentFile=/etc/vllm/nccl.conf\n"
                                + VLLM.split("\n", 1)[1])})
    env = discover(host)[2]["vllm.service"].env
    assert env["NCCL_PROTO"].origin == "EnvironmentFile"


def test_environment_expands_in_exec_start_and_unset_is_recorded(tmp_path: Path) -> None:
    """systemd.service(5): ``$NAME`` / ``${NAME}`` in ExecStart= take the unit's environment;
    UnsetEnvironment= removes a name set before it."""
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": (
        "[Service]\nEnvironment=MODEL=/models/x TP=4 NCCL_ALGO=Tree\n"
        "UnsetEnvironment=NCCL_ALGO\n"
        "ExecStart=/usr/bin/vllm serve ${MODEL} --tensor-parallel-size $TP\n")})
    s = discover(host)[2]["vllm.service"]
    assert s.argv == ["/usr/bin/vllm", "serve", "/models/x", "--tensor-parallel-size", "4"]
    assert "NCCL_ALGO" not in s.env
    removed = s.removed["NCCL_ALGO"]
    assert (removed.value, removed.source, removed.line, removed.origin) == (
        "Tree", f"/{SYS}/vllm.service", 3, "UnsetEnvironment")
    assert removed.evidence and removed.evidence[0]


@pytest.mark.parametrize(("state", "enabled"), [
    ("enabled", True), ("enabled-runtime", True), ("alias", True), ("disabled", False),
    ("masked", False), ("masked-runtime", False), ("linked", False), ("linked-runtime", False)])
def test_enabled_as_list_unit_files_says(tmp_path: Path, state: str, enabled: bool) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": VLLM,
                               f"{SYS}/multi-user.target.wants/vllm.service": VLLM},
                    [(LIST_FILES, f"ssh.service enabled enabled\nvllm.service {state} enabled\n",
                      0)])
    ctx, _, servers = discover(host)
    st = servers["vllm.service"].state
    assert st.enabled is enabled
    assert st.enabled_detail == f"systemctl list-unit-files: {state}"
    assert cited(ctx, st.enabled_evidence[0])[1] == f"vllm.service {state} enabled"


def test_enabled_from_wants_links_without_list_unit_files(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": VLLM,
                               f"{SYS}/multi-user.target.wants/vllm.service": VLLM,
                               f"{SYS}/other.service": VLLM},
                    [(LIST_FILES, "", 1)])  # a failed listing says nothing
    _, _, servers = discover(host)
    st = servers["vllm.service"].state
    assert st.enabled is True
    assert st.enabled_detail == f"enabled: /{SYS}/multi-user.target.wants/vllm.service"
    other = servers["other.service"].state
    assert other.enabled is False
    assert other.enabled_detail == "no .wants/ link under /etc/systemd/system"
    assert other.enabled_evidence


def test_a_unit_list_unit_files_does_not_name_falls_back_to_links(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": VLLM},
                    [(LIST_FILES, "ssh.service enabled enabled\n", 0)])
    st = discover(host)[2]["vllm.service"].state
    assert (st.enabled, st.enabled_detail) == (False, "no .wants/ link under /etc/systemd/system")


@pytest.mark.parametrize(("active", "sub", "value"), [
    ("active", "running", "running"), ("failed", "failed", "failed"),
    ("inactive", "dead", "stopped"), ("activating", "auto-restart", "crash-looping")])
def test_state_from_list_units(tmp_path: Path, active: str, sub: str, value: str) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": VLLM},
                    [(LIST_UNITS, f"ssh.service loaded active running OpenSSH\n"
                                  f"vllm.service loaded {active} {sub} vLLM\n", 0)])
    ctx, _, servers = discover(host)
    st = servers["vllm.service"].state
    assert st.value == value
    assert st.detail == f"systemctl list-units: {active} ({sub})"
    assert cited(ctx, st.evidence[0])[1] == f"vllm.service loaded {active} {sub} vLLM"


def test_a_failed_list_units_says_nothing(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": VLLM},
                    [(LIST_UNITS, "vllm.service loaded active running vLLM\n", 1)])
    st = discover(host)[2]["vllm.service"].state
    assert (st.value, st.detail, st.evidence) == ("unknown", "", [])


J = "Nov 20 13:5{} gpu-07 {}: {}"
STARTED = J.format("0:01", "systemd[1]", "Started vllm.service - vLLM.")
UP = J.format("1:30", "vllm[2211]", "(APIServer pid=2211) INFO:     Application startup "
              "complete.")
EXITED = J.format("2:00", "systemd[1]", "vllm.service: Main process exited, code=exited, "
                  "status=1/FAILURE")
FAILED = J.format("2:00", "systemd[1]", "vllm.service: Failed with result 'exit-code'.")


def _journal_host(tmp_path: Path, lines: list[str], env: str = "",
                  units: str | None = None) -> Host:
    commands = [(journal("vllm.service"), "\n".join(lines) + "\n", 0)]
    if units is not None:
        commands.append((LIST_UNITS, units, 0))
    return snapshot(tmp_path, {f"{SYS}/vllm.service": "[Service]\n" + env
                               + VLLM.split("\n", 1)[1]}, commands)


def test_the_cause_of_a_failure_is_the_last_error_before_it(tmp_path: Path) -> None:
    lines = [STARTED,
             J.format("1:00", "vllm[2211]", "(APIServer pid=2211) RuntimeError: first"),
             J.format("1:10", "vllm[2211]", "(APIServer pid=2211) ValueError: the last one"),
             J.format("1:11", "vllm[2211]", "(APIServer pid=2211)   raised here"),
             EXITED, FAILED]
    ctx, _, servers = discover(_journal_host(tmp_path, lines))
    s = servers["vllm.service"]
    assert s.cause == "ValueError: the last one"
    assert cited(ctx, s.failure or "")[1] == lines[2]
    assert s.journal_lines == 6
    assert s.state.value == "failed"
    assert cited(ctx, s.state.evidence[0])[1] == FAILED


def test_an_error_detail_on_a_following_line_joins_the_cause(tmp_path: Path) -> None:
    """pydantic's ValidationError puts the reason on the next lines ("Value error, …")."""
    lines = [STARTED,
             J.format("1:10", "vllm[2211]", "pydantic_core._pydantic_core.ValidationError: "
                      "1 validation error for ModelConfig"),
             J.format("1:10", "vllm[2211]", "  Value error, fp8 is not supported [type=x]"),
             EXITED, FAILED]
    s = discover(_journal_host(tmp_path, lines))[2]["vllm.service"]
    assert s.cause == ("pydantic_core._pydantic_core.ValidationError: 1 validation error for "
                       "ModelConfig Value error, fp8 is not supported [type=x]")


@pytest.mark.parametrize("message", ["ERROR 11-20 13:51:10 engine died",
                                     "error: unrecognized arguments: --bogus"])
def test_other_error_lines_are_causes(tmp_path: Path, message: str) -> None:
    lines = [STARTED, J.format("1:10", "vllm[2211]", message), EXITED, FAILED]
    s = discover(_journal_host(tmp_path, lines))[2]["vllm.service"]
    assert s.cause == message


def test_a_failure_without_an_error_line_cites_the_failure(tmp_path: Path) -> None:
    lines = [STARTED, J.format("1:10", "vllm[2211]", "killed"), EXITED, FAILED]
    ctx, _, servers = discover(_journal_host(tmp_path, lines))
    s = servers["vllm.service"]
    assert s.cause == ""
    assert cited(ctx, s.failure or "")[1] == FAILED


def test_gpu_uuids_parsed_as_integers_are_named_as_the_cause(tmp_path: Path) -> None:
    uuid = "GPU-6c3b2a10-52b4-4c2f-8a0e-0e0f1c2d3e4f"
    err = J.format("1:10", "vllm[2211]", f"ValueError: invalid literal for int() with base "
                   f"10: '{uuid}'")
    lines = [STARTED, err, EXITED, FAILED]
    ctx, _, servers = discover(_journal_host(
        tmp_path, lines, env=f"Environment=CUDA_VISIBLE_DEVICES={uuid}\n"))
    s = servers["vllm.service"]
    assert s.cause == (f"CUDA_VISIBLE_DEVICES (/{SYS}/vllm.service:2) lists GPU UUIDs and the "
                       "server parses it as integers: ValueError: invalid literal for int() "
                       f"with base 10: '{uuid}'")
    assert cited(ctx, s.failure or "")[1] == err


def test_gpu_indices_are_not_blamed_for_an_int_error(tmp_path: Path) -> None:
    err = J.format("1:10", "vllm[2211]", "ValueError: invalid literal for int() with base "
                   "10: 'GPU-x'")
    s = discover(_journal_host(tmp_path, [STARTED, err, EXITED, FAILED],
                               env="Environment=CUDA_VISIBLE_DEVICES=0,1\n"))[2]["vllm.service"]
    assert s.cause == "ValueError: invalid literal for int() with base 10: 'GPU-x'"


def test_a_journal_that_came_up_says_running(tmp_path: Path) -> None:
    ctx, _, servers = discover(_journal_host(tmp_path, [STARTED, UP]))
    s = servers["vllm.service"]
    assert s.state.value == "running"
    assert s.state.detail.startswith("the journal shows it started and came up")
    assert cited(ctx, s.state.evidence[0])[1] == STARTED
    assert s.failure is None and s.cause == ""


def test_a_failed_unit_restarting_in_its_journal_is_crash_looping(tmp_path: Path) -> None:
    restart = J.format("2:10", "systemd[1]", "vllm.service: Scheduled restart job, restart "
                       "counter is at {}.")
    lines = [STARTED, EXITED, FAILED, restart.format(1), STARTED, EXITED, FAILED,
             restart.format(2)]
    ctx, _, servers = discover(_journal_host(
        tmp_path, lines, units="vllm.service loaded failed failed vLLM\n"))
    st = servers["vllm.service"].state
    assert st.value == "crash-looping"
    assert st.restarts == 2
    assert st.detail.startswith("systemctl list-units: failed (failed); the journal shows "
                                "restart counter 2")
    assert [cited(ctx, e)[1] for e in st.evidence] == [
        "vllm.service loaded failed failed vLLM", lines[7]]


def test_list_units_wins_over_the_journal(tmp_path: Path) -> None:
    st = discover(_journal_host(tmp_path, [STARTED, UP],
                                units="vllm.service loaded inactive dead vLLM\n")
                  )[2]["vllm.service"].state
    assert (st.value, st.detail) == ("stopped", "systemctl list-units: inactive (dead)")


def test_a_failed_journal_read_leaves_the_state_unknown(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": VLLM},
                    [(journal("vllm.service"), f"{STARTED}\n{UP}\n", 1)])
    s = discover(host)[2]["vllm.service"]
    assert (s.state.value, s.journal_lines) == ("unknown", 0)


def test_too_many_files_for_one_search_is_said(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit._sandbox import _files
    monkeypatch.setattr(_files, "GREP_BYTES", 10)
    files = {f"{SYS}/a{n}.service": VLLM for n in range(3)}
    _, model, _ = discover(snapshot(tmp_path, files))
    # the search stops once its byte budget is spent: after the first file here
    assert "/etc/systemd/system/*.service matches more files than one search reads (1): " \
           "units past those were not searched" in model.problems


def test_a_unit_past_a_capped_listing_is_still_found(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """More entries than one listing returns (5,000 on a real host; 3 here, so the case stays
    cheap): drop-in directories sort before the unit, so the listing misses it; the candidate
    the search found is looked up directly, and the earlier lookup path still wins."""
    from agentkit._sandbox import _files
    real = _files.glob_paths
    monkeypatch.setattr(_files, "glob_paths",
                        lambda ctx, pattern, limit=3: real(ctx, pattern, min(limit, 3)))
    _failing_globs(monkeypatch, lambda p: p.startswith("/run/"))  # one lookup fails: empty
    files = {f"{d}/a{n}.service.d/x.txt": "" for n in range(4)
             for d in ("usr/lib/systemd/system", "lib/systemd/system")}
    files["usr/lib/systemd/system/zz-vllm.service"] = VLLM
    files["lib/systemd/system/zz-vllm.service"] = VLLM.replace("/models/m", "/models/lib")
    _, model, servers = discover(snapshot(tmp_path, files))
    assert "a unit directory holds more files than one listing shows; candidate units were " \
           "looked up one by one" in model.problems
    assert servers["zz-vllm.service"].path == "/lib/systemd/system/zz-vllm.service"
    assert servers["zz-vllm.service"].argv[2] == "/models/lib"

SYSTEMCTL = shutil.which("systemctl")


@pytest.mark.skipif(SYSTEMCTL is None, reason="systemctl is not installed: the differential "
                    "check of list-unit-files against is-enabled needs it (offline, --root)")
@pytest.mark.parametrize("verb", ["enable", "link", "mask", None])
def test_enabled_agrees_with_systemctl_is_enabled(tmp_path: Path, verb: str | None) -> None:
    """The real systemctl (offline, on a scratch root) enables, links or masks a unit; its
    list-unit-files output, read by agentkit, says enabled exactly when is-enabled exits 0."""
    live = tmp_path / "live"
    unit = VLLM + "[Install]\nWantedBy=multi-user.target\n"
    for d in (SYS, "opt", "usr/lib/systemd/system"):
        (live / d).mkdir(parents=True)
    (live / "opt/vllm.service").write_text(unit)
    env = {**os.environ, "SYSTEMD_IGNORE_CHROOT": "1"}

    def systemctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(SYSTEMCTL), f"--root={live}", *args], capture_output=True,
                              text=True, env=env, check=False)

    if verb == "link":
        assert systemctl("link", "/opt/vllm.service").returncode == 0
    else:
        (live / "usr/lib/systemd/system/vllm.service").write_text(unit)
        if verb is not None:
            assert systemctl(verb, "vllm.service").returncode == 0
    listed = systemctl(*LIST_FILES[1:])
    assert listed.returncode == 0, listed.stderr
    is_enabled = systemctl("is-enabled", "vllm.service").returncode == 0
    host = snapshot(tmp_path / "snap", {"usr/lib/systemd/system/vllm.service": unit},
                    [(LIST_FILES, listed.stdout, 0)])
    st = discover(host)[2]["vllm.service"].state
    assert st.enabled is is_enabled, (verb, listed.stdout)


def _failing_globs(monkeypatch: pytest.MonkeyPatch, fails: Any) -> None:
    """Make the file tools fail (as a refused or unreadable path does) where ``fails(pattern)``
    says: a failed listing or search is an empty one, never a crash."""
    from agentkit._sandbox import _files
    from agentkit._sandbox._tool import ToolError
    real = _files.glob_paths

    def glob_paths(ctx: Any, pattern: str, limit: int = 500) -> Any:
        if fails(pattern):
            raise ToolError("refused: unreadable here")
        return real(ctx, pattern, limit)

    monkeypatch.setattr(_files, "glob_paths", glob_paths)


def test_a_failed_listing_or_search_is_empty(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _failing_globs(monkeypatch, lambda p: p.startswith("/run/")
                   or p.endswith("*.service.d/*.conf"))
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": VLLM,
                               "run/systemd/system/late.service": VLLM})
    _, _, servers = discover(host)
    assert sorted(servers) == ["vllm.service"]


def test_a_failed_wants_listing_leaves_the_loaded_instances(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _failing_globs(monkeypatch, lambda p: ".wants/" in p)
    host = snapshot(tmp_path, {f"{SYS}/vllm@.service":
                               "[Service]\nExecStart=/usr/bin/vllm serve /models/%i\n"},
                    [(LIST_UNITS, "vllm@qwen.service loaded active running q\n", 0)])
    assert sorted(discover(host)[2]) == ["vllm@qwen.service"]


def test_units_listed_that_are_no_instance_of_the_template_are_not_taken(
        tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm@.service":
                               "[Service]\nExecStart=/usr/bin/vllm serve /models/%i\n"},
                    [(LIST_UNITS, "nvidia-persistenced.service loaded active running n\n"
                                  "vllm@qwen.socket loaded active running s\n"
                                  "vllm@qwen.service loaded active running q\n", 0)])
    assert sorted(discover(host)[2]) == ["vllm@qwen.service"]


def test_a_drop_in_without_its_unit_makes_no_unit(tmp_path: Path) -> None:
    """A drop-in directory for a name no unit file has: systemd has no such unit (not-found);
    the units after it in name order are still read."""
    host = snapshot(tmp_path, {f"{SYS}/a-ghost.service.d/x.conf":
                               "[Service]\nExecStart=/usr/bin/vllm serve /models/g\n",
                               f"{SYS}/vllm.service": VLLM})
    assert sorted(discover(host)[2]) == ["vllm.service"]


def test_a_dangling_unit_link_is_said_not_parsed(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm.service.d/x.conf":
                               "[Service]\nExecStart=\nExecStart=/usr/bin/vllm serve /m\n"})
    (tmp_path / SYS / "vllm.service").symlink_to("/nowhere/vllm.service")
    _, model, servers = discover(host)
    assert servers == {}
    assert model.problems == ["/etc/systemd/system/vllm.service: could not be parsed"]


@pytest.mark.parametrize(("first", "second"), [
    ("run/systemd/system", "lib/systemd/system"),
    ("usr/local/lib/systemd/system", "usr/lib/systemd/system"),
    ("run/systemd/system", "usr/local/lib/systemd/system")])
def test_the_lookup_order_between_runtime_local_and_vendor_directories(
        tmp_path: Path, first: str, second: str) -> None:
    host = snapshot(tmp_path, {f"{first}/vllm.service": VLLM,
                               f"{second}/vllm.service": VLLM.replace("/models/m", "/x")})
    assert discover(host)[2]["vllm.service"].path == f"/{first}/vllm.service"


def test_what_the_unit_reading_says_reaches_the_server(tmp_path: Path) -> None:
    """systemd.exec(5): ``export NAME=…`` in an EnvironmentFile is not a valid assignment (the
    line is ignored); UnsetEnvironment= removes a name; systemd.service(5): two ExecStart= in a
    Type=simple service make the unit refused; %H in ExecStart= is the host name (not known
    from files); an EnvironmentFile= glob in a directory component is not expanded."""
    host = snapshot(tmp_path, {
        "etc/default/vllm": "# the fast path\nNCCL_PROTO=LL\nexport NCCL_ALGO=Tree\n",
        f"{SYS}/vllm.service": (
            "[Service]\nEnvironmentFile=/etc/default/vllm\nEnvironmentFile=/etc/*/x.env\n"
            "Environment=NCCL_IB_HCA=mlx5\nUnsetEnvironment=NCCL_IB_HCA\n"
            "ExecStart=/usr/bin/vllm serve /models/%H\n"),
        f"{SYS}/vllm.service.d/two.conf": "[Service]\nExecStart=/usr/bin/vllm serve /b\n"})
    ctx, _, servers = discover(host)
    s = servers["vllm.service"]
    proto = s.env["NCCL_PROTO"]
    assert (proto.name, proto.comment, proto.line) == ("NCCL_PROTO", "the fast path", 2)
    assert cited(ctx, proto.evidence[0])[1] == "NCCL_PROTO=LL"
    assert [(i.name, i.value, i.source, i.line, i.origin, i.comment) for i in s.ignored] == [
        ("NCCL_ALGO", "Tree", "/etc/default/vllm", 3, "ignored", "export NCCL_ALGO")]
    assert cited(ctx, s.ignored[0].evidence[0])[1] == "export NCCL_ALGO=Tree"
    gone = s.removed["NCCL_IB_HCA"]
    assert (gone.name, gone.comment) == ("NCCL_IB_HCA", f"/{SYS}/vllm.service:4")
    assert "refuses to load the unit" in s.refused
    assert any("/etc/*/x.env" in u for u in s.unresolved)
    assert any("%H" in p for p in s.problems)
    assert cited(ctx, s.argv_evidence[0])[1] == "ExecStart=/usr/bin/vllm serve /b"


@pytest.mark.parametrize("workdir", ["/opt/app", "-/opt/app"])
def test_a_unit_running_compose_up_names_its_file_from_its_working_directory(
        tmp_path: Path, workdir: str) -> None:
    """systemd.exec(5) WorkingDirectory= ("-" makes a missing one no error); docker compose
    reads compose.yaml (then compose.yml, docker-compose.yaml, docker-compose.yml) from it."""
    host = snapshot(tmp_path, {f"{SYS}/llm.service": (
        f"[Service]\nWorkingDirectory={workdir}\nExecStart=/usr/bin/docker compose up\n")})
    _, model, servers = discover(host)
    assert servers == {}  # the compose runtime reads the project's services
    assert model.compose_units == {f"/opt/app/{n}": "llm.service" for n in (
        "compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")}


def test_a_unit_running_docker_run_reads_its_env_file(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {
        "etc/vllm.env": "NCCL_PROTO=LL\n",
        f"{SYS}/llm.service": ("[Service]\nExecStart=/usr/bin/docker run --rm --name llm "
                               "--env-file /etc/vllm.env vllm/vllm-openai:v0.11.0 --model /m\n")})
    s = discover(host)[2]["llm.service"]
    assert s.env["NCCL_PROTO"].value == "LL"


def test_a_start_script_is_followed(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {
        "opt/start.sh": "#!/bin/bash\nexport NCCL_PROTO=Simple\nexec vllm serve /models/s\n",
        f"{SYS}/llm.service": "[Service]\nExecStart=/opt/start.sh\n"})
    s = discover(host)[2]["llm.service"]
    assert s.script == "/opt/start.sh"
    assert s.env["NCCL_PROTO"].value == "Simple"


def test_every_wants_link_is_named(tmp_path: Path) -> None:
    host = snapshot(tmp_path, {f"{SYS}/vllm.service": VLLM,
                               f"{SYS}/multi-user.target.wants/vllm.service": VLLM,
                               f"{SYS}/graphical.target.wants/vllm.service": VLLM})
    st = discover(host)[2]["vllm.service"].state
    assert st.enabled_detail == (f"enabled: /{SYS}/graphical.target.wants/vllm.service, "
                                 f"/{SYS}/multi-user.target.wants/vllm.service")


def test_a_journal_without_lifecycle_lines_says_nothing(tmp_path: Path) -> None:
    st = discover(_journal_host(tmp_path, [UP]))[2]["vllm.service"].state
    assert (st.value, st.detail, st.evidence) == ("unknown", "", [])


def test_a_running_unit_with_restarts_in_its_journal_stays_running(tmp_path: Path) -> None:
    restart = J.format("2:10", "systemd[1]", "vllm.service: Scheduled restart job, restart "
                       "counter is at {}.")
    lines = [STARTED, EXITED, FAILED, restart.format(1), STARTED, EXITED, FAILED,
             restart.format(2)]
    st = discover(_journal_host(tmp_path, lines,
                                units="vllm.service loaded active running vLLM\n")
                  )[2]["vllm.service"].state
    assert (st.value, st.detail) == ("running", "systemctl list-units: active (running)")


def test_an_error_after_the_failure_is_not_its_cause(tmp_path: Path) -> None:
    uuid = "GPU-6c3b2a10-52b4-4c2f-8a0e-0e0f1c2d3e4f"
    later = J.format("3:00", "vllm[2300]", f"ValueError: invalid literal for int() with base "
                     f"10: '{uuid}'")
    s = discover(_journal_host(tmp_path, [STARTED, EXITED, FAILED, STARTED, later],
                               env=f"Environment=CUDA_VISIBLE_DEVICES={uuid}\n")
                 )[2]["vllm.service"]
    assert s.cause == ""


def test_the_gpu_uuid_line_is_found_at_any_distance(tmp_path: Path) -> None:
    uuid = "GPU-6c3b2a10-52b4-4c2f-8a0e-0e0f1c2d3e4f"
    err = J.format("1:10", "vllm[2211]", f"ValueError: invalid literal for int() with base "
                   f"10: '{uuid}'")
    noise = J.format("1:11", "vllm[2211]", f"INFO visible devices '{uuid}'")
    s = discover(_journal_host(tmp_path, [STARTED, J.format("1:09", "vllm[2211]", "loading"),
                                          err, noise, EXITED, FAILED],
        env=f"Environment=CUDA_VISIBLE_DEVICES={uuid}\n"))[2]["vllm.service"]
    assert s.cause.startswith("CUDA_VISIBLE_DEVICES (/etc/systemd/system/vllm.service:2) "
                              "lists GPU UUIDs and the server parses it as integers: "
                              "ValueError: invalid literal")


def test_a_detail_line_before_the_error_is_not_joined(tmp_path: Path) -> None:
    lines = [STARTED,
             J.format("1:00", "vllm[2211]", "WARNING fp8 is not supported on this GPU"),
             J.format("1:10", "vllm[2211]", "RuntimeError: engine died"),
             EXITED, FAILED]
    s = discover(_journal_host(tmp_path, lines))[2]["vllm.service"]
    assert s.cause == "RuntimeError: engine died"
