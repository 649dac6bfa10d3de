"""Ask the authority first: what the service manager has loaded for a unit (``systemctl
show``), its own environment (``systemctl show-environment``), and what the running process
actually has (its environment, read by ``serving_processes``).

The files say what a unit *would* get at its next start; the manager says what it has loaded
(which drop-ins, which ``Environment=`` lines: edits since the last ``daemon-reload`` are not
in it); the process environment is what is in effect *now*. Where they disagree, the answer
names the disagreement and why it exists, never picking one silently.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ._model import Server, Setting
from ._state import from_list_units
from .runtimes._systemctl_show import (
    SHOW_ENVIRONMENT,
    UnitShow,
    parse_show,
    parse_show_environment,
    show_argv,
)

if TYPE_CHECKING:
    from .._sandbox._context import RecipeContext

# The manager's environment reaches every unit; only what an investigation needs is kept
# from it (the same families the process capture keeps), never a credential.
_KEPT = ("NCCL_", "CUDA_", "VLLM_", "SGLANG_", "TRTLLM_", "TORCH_", "PYTORCH_")
_FILE_ORIGINS = ("unit", "drop-in")  # settings systemd reads at daemon-reload, not at start


async def consult(ctx: RecipeContext, servers: list[Server]) -> None:
    """``systemctl show`` for each systemd server and the manager's environment, all at once;
    a host or snapshot without them keeps the file reading alone (said in a note)."""
    units = [s for s in servers if s.runtime == "systemd"]
    if not units:
        return
    got = await ctx.tools([*[("run_command", {"argv": show_argv(s.name)}) for s in units],
                           ("run_command", {"argv": SHOW_ENVIRONMENT})])
    manager = _manager(ctx, got[-1], units)
    for s, out in zip(units, got[:-1], strict=True):
        if out is None or out.get("exit_code") != 0:
            s.notes.append("the service manager was not asked (no `systemctl show` here): "
                           "the unit files alone say what it loaded")
        else:
            _apply(ctx, s, parse_show(s.name, out["stdout"]), out)
        _manager_settings(s, manager)


def _manager(ctx: RecipeContext, out: dict[str, Any] | None, units: list[Server]
             ) -> dict[str, Setting]:
    if out is None or out.get("exit_code") != 0:
        return {}
    env, problems = parse_show_environment(out["stdout"])
    for p in problems:
        for s in units:
            s.problems.append(f"systemctl show-environment {p}: not understood, so the "
                              "manager's environment is not established for it")
    lines = {ln.partition("=")[0]: n for n, ln in enumerate(out["stdout"].split("\n"), 1)}
    return {k: Setting(name=k, value=v, source="systemctl show-environment", line=0,
                       evidence=[ctx.cite_output_line(out, lines.get(k, 1))],
                       origin="manager environment")
            for k, v in env.items() if k.startswith(_KEPT)}


def _manager_settings(s: Server, manager: dict[str, Setting]) -> None:
    """The manager's environment comes first in systemd's order: every unit setting wins
    over it, and UnsetEnvironment= removes from it too (systemd.exec(5))."""
    for name, setting in manager.items():
        if name not in s.env and name not in s.removed:
            s.env[name] = setting


def _apply(ctx: RecipeContext, s: Server, shown: UnitShow, out: dict[str, Any]) -> None:
    s.shown = shown
    cite = ctx.cite_output_line
    shown_ev = {k: cite(out, n) for k, n in shown.lines.items()}
    s.shown_evidence = shown_ev
    for p in shown.problems:
        s.problems.append(f"systemctl show {s.name}: {p}: not understood, so what the "
                          "manager loaded for it is not established")
    _state(s, shown, shown_ev.get("ActiveState", ""))
    if shown.main_pid > 0 and s.pid is None:
        s.pid = shown.main_pid
    if shown.started:
        s.notes.append(f"main process started {shown.started} (systemctl show)")
    dropins = _dropin_differences(s, shown)
    s.loaded_differs += dropins
    s.loaded_differs += _environment_differences(s, shown, unseen=any(
        d.startswith("the manager loaded drop-in") for d in dropins))
    if shown.active in ("active", "activating", "reloading", "deactivating"):
        _loaded_in_effect(s, shown, shown_ev.get("Environment", ""))
    if shown.user and shown.user != s.user:
        s.loaded_differs.append(f"the manager runs {s.name} as {shown.user} (systemctl show "
                                f"User=), the files say {s.user}")
    if shown.fragment and shown.fragment != s.path:
        s.loaded_differs.append(f"the manager loaded {s.name} from {shown.fragment} "
                                f"(systemctl show FragmentPath=), the files here resolve it to "
                                f"{s.path}")


def _state(s: Server, shown: UnitShow, evidence: str) -> None:
    """The manager's ActiveState/SubState is as strong as list-units (the same source) and
    stronger than the journal's reading; a crash loop the journal saw stays one while the
    manager shows its current attempt starting or up (a loop passes through active)."""
    if not shown.active or s.state.detail.startswith("systemctl list-units"):
        return
    value = from_list_units(shown.active, shown.sub)
    if s.state.value == "crash-looping" and value in ("running", "starting"):
        return
    s.state.value = value
    s.state.detail = f"systemctl show: ActiveState={shown.active}, SubState={shown.sub}"
    s.state.evidence = [evidence]


_DROPIN = re.compile(r"/[^/]*service\.d/[^/]+\.conf$")  # X.service.d/, X-.service.d/, service.d/


def _dropins_read(s: Server) -> list[str]:
    """The drop-ins among the files read (not an EnvironmentFile= that sits in a .d/)."""
    return [f for f in s.files if _DROPIN.search(f)]


def _dropin_differences(s: Server, shown: UnitShow) -> list[str]:
    """``DropInPaths=`` is the list of drop-ins the manager actually read at its last load."""
    if "DropInPaths" not in shown.lines:
        return []
    read, loaded = _dropins_read(s), shown.dropins
    out = [f"the manager loaded drop-in {p} (systemctl show DropInPaths=), which the unit "
           "files here do not show: removed since the last daemon-reload, or not found by "
           "this reading" for p in loaded if p not in read]
    out += [f"drop-in {p} is on disk but the manager has not loaded it (not in systemctl show "
            "DropInPaths=): written after the last daemon-reload (so its settings apply only "
            "after `systemctl daemon-reload` and a restart), or not one systemd reads for this "
            "unit" for p in read if p not in loaded]
    return out


def _environment_differences(s: Server, shown: UnitShow, unseen: bool) -> list[str]:
    """NCCL/CUDA ``Environment=`` lines the manager loaded against those the files hold now
    (EnvironmentFile= contents are read at each start, so they cannot differ this way)."""
    if "Environment" not in shown.lines:
        return []
    loaded = shown.env_map
    out = []
    names = {k for k in loaded if k.startswith(_KEPT)} | {
        k for k, v in s.env.items() if k.startswith(_KEPT) and v.origin in _FILE_ORIGINS}
    for name in sorted(names):
        said = s.env.get(name)
        if said is not None and said.origin not in _FILE_ORIGINS:
            continue  # set later in the chain (env file, script): not an Environment= line
        have = loaded.get(name)
        if said is not None and have == said.value:
            continue
        if said is None:  # loaded, not in the files read here
            why = ("the files were edited after the last daemon-reload, or it comes from a "
                   "loaded drop-in the files here do not show" if unseen else
                   "the files were edited after the last daemon-reload")
            out.append(f"{name}={have} is loaded (systemctl show Environment=) and the unit "
                       f"files here do not set it: {why}")
        else:
            state = "not loaded" if have is None else f"loaded as {have}"
            out.append(f"{name}={said.value} ({said.where}) is {state} (systemctl show "
                       "Environment=): edited after the last daemon-reload, so a restart "
                       "alone keeps what is loaded; `systemctl daemon-reload` first applies it")
    return out


def _loaded_in_effect(s: Server, shown: UnitShow, evidence: str) -> None:
    """A unit that runs got the Environment= and UnsetEnvironment= the manager had loaded
    when it started, not what the files say now: where they differ, the loaded ones stand (an
    EnvironmentFile= or a start script still wins, as at exec time). The process environment,
    when read, is stronger still (compare_running)."""
    if "Environment" not in shown.lines:
        return
    loaded = shown.env_map
    for name in [k for k, v in s.env.items() if v.origin in _FILE_ORIGINS]:
        if name.startswith(_KEPT) and name not in loaded:
            del s.env[name]  # on disk, not loaded: not in the running process's start
    for name, value in loaded.items():
        if name.startswith(_KEPT):
            _loaded_one(s, shown, name, value, evidence)


def _loaded_one(s: Server, shown: UnitShow, name: str, value: str, evidence: str) -> None:
    said = s.env.get(name)
    gone = s.removed.get(name)
    if gone is not None and gone.origin != "UnsetEnvironment":
        return  # a start script's unset or env -u takes it out at exec time, loaded or not
    if _unset(shown, name, value):
        if said is not None and said.origin in _FILE_ORIGINS:
            del s.env[name]
            s.loaded_differs.append(f"{name}={value} is removed by the loaded "
                                    "UnsetEnvironment= (systemctl show), which the unit files "
                                    "here do not show")
        return
    if name in s.removed and "UnsetEnvironment" in shown.lines:
        gone = s.removed.pop(name)
        s.loaded_differs.append(f"UnsetEnvironment={name} ({gone.where}) is not loaded "
                                "(systemctl show UnsetEnvironment=): edited after the last "
                                f"daemon-reload, so {name}={value} still reaches the process")
        said = s.env.get(name)
    if said is not None and (said.origin not in _FILE_ORIGINS or said.value == value):
        return
    s.env[name] = Setting(name=name, value=value, source=f"systemctl show {s.name}", line=0,
                          evidence=[evidence], origin="loaded")


def _unset(shown: UnitShow, name: str, value: str) -> bool:
    return name in shown.unset or f"{name}={value}" in shown.unset


def compare_running(s: Server, running: dict[str, str], evidence: str) -> None:
    """The process environment is what is in effect now: each NCCL variable where it differs
    from what the files say is recorded (``s.drift``) with why, and takes the process value."""
    for name in sorted(set(running) | {k for k in s.env if k.startswith("NCCL_")}):
        if not name.startswith("NCCL_"):
            continue
        now, said = running.get(name), s.env.get(name)
        if said is not None and now == said.value:
            continue
        why = _why(s, now, said)
        shown_now = f"{name}={now}" if now is not None else f"{name} unset"
        files = ("the unit files do not set it" if said is None else
                 f"the service manager has {said.value} loaded ({said.where})"
                 if said.origin == "loaded" else
                 f"the unit files say {said.value} ({said.where})")
        text = f"In effect now: {shown_now} (process {s.pid}'s environment); {files}: {why}"
        s.drift.append({"name": name, "now": now, "said": said.value if said else None,
                        "where": said.where if said else "", "why": why, "text": text,
                        "evidence": [evidence, *(said.evidence if said else [])]})
        s.problems.append(text)
        if now is None:
            s.env.pop(name, None)
        else:
            s.env[name] = Setting(name=name, value=str(now),
                                  source=f"process {s.pid} environment", line=0,
                                  evidence=[evidence], origin="running process")


def _why(s: Server, now: str | None, said: Setting | None) -> str:
    shown: UnitShow | None = s.shown
    started = f" (started {shown.started})" if shown is not None and shown.started else ""
    if said is None:
        where = ("neither the unit files nor the manager's loaded configuration or environment "
                 "set it" if shown is not None and "Environment" in shown.lines else
                 "the unit files do not set it")
        return (f"set somewhere the files do not show ({where}), or removed from them since "
                f"the process started{started}")
    return f"changed since the last restart{started}: a restart would apply it"
