"""systemd: every unit that starts an inference engine (directly, through ``env`` or a start
script, or as a template instance), its effective argv and environment with the source of each
setting (unit, drop-ins, EnvironmentFile=, UnsetEnvironment=), and its state from
``systemctl`` and the journal."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..._sandbox._systemd import expand_exec
from ..._sandbox._systemd_paths import UNIT_PATHS
from .._authority import consult
from .._command import follow_command
from .._model import HostModel, Server, Setting
from .._state import (
    LIST_UNIT_FILES,
    LIST_UNITS,
    State,
    from_journal,
    from_list_units,
    journal_life,
    parse_list_unit_files,
    parse_list_units,
)
from ._rununit import contain

if TYPE_CHECKING:
    from ..._sandbox._context import RecipeContext

UNIT_DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
             "/usr/lib/systemd/system", "/lib/systemd/system")
# A unit is parsed only when an ExecStart line (in it or a drop-in) could start a server:
# a host has hundreds of units and parsing each was most of a live investigation's cost.
# Python alone is no sign (hundreds of services run python -m something); an engine started by
# python names its module (python -m vllm.entrypoints…, sglang.launch_server), which matches.
_CANDIDATE = (r"^\s*ExecStart\s*=.*(vllm|sglang|trtllm|\.sh\b|\bbash\b|\bsh\b|\benv\b"
              r"|\bdocker\b|\bpodman\b)")


# The line that says why a process died: a Python exception or an error message.
_ERROR = re.compile(r"\b\w*(Error|Exception)\b: |\bERROR\b|\berror: ")


_DETAIL = re.compile(r"\b(Value|Type|Assertion) error, |\bmust be\b|\bnot supported\b")
_PREFIX = re.compile(r"^.*?\]: (?:\([\w-]+ pid=\d+\) )?")


def _message(line: str) -> str:
    """A journal line without its date, host, process and vLLM's "(APIServer pid=…)"."""
    return _PREFIX.sub("", line).strip()


def journal_argv(unit: str) -> list[str]:
    return ["journalctl", "-u", unit, "-n", "2000", "--no-pager"]


async def discover(ctx: RecipeContext, model: HostModel) -> list[Server]:
    """The units that start an engine, with their states."""
    units_out = await ctx.tool("run_command", optional=True, argv=LIST_UNITS)
    listed = _ok_lines(units_out, parse_list_units)
    servers = []
    for name, path, instance in await _candidate_units(ctx, model, listed):
        server = await _server(ctx, name, path, instance, model)
        if server is not None:
            servers.append(server)
    if servers:
        await _states(ctx, servers, units_out, listed)
        await consult(ctx, servers)  # what the manager loaded, where it knows
    return servers


async def _candidate_units(ctx: RecipeContext, model: HostModel, listed: dict[str, Any]
                           ) -> list[tuple[str, str, str | None]]:
    """(unit name, its file, template instance) for units whose ExecStart could start a
    server. A name in an earlier directory masks the same name in a later one, as systemd
    does; a template (``foo@.service``) counts once per instance that is enabled or loaded."""
    names: dict[str, str] = {}
    wanted: set[str] = set()
    model.looked_in.append(f"systemd units ({len(UNIT_DIRS)} unit directories from "
                           f"{UNIT_DIRS[0]}, following start scripts)")
    # What each directory holds, all at once; then its ExecStart lines, only where it exists.
    listings = await ctx.tools([("glob", {"pattern": f"{d}/*.service*", "max_results": 5000})
                                for d in UNIT_DIRS])
    present = [d for d, got in zip(UNIT_DIRS, listings, strict=True) if got and got["paths"]]
    for got in _by_priority(listings):  # the first lookup path holding a name wins
        for p in (got or {}).get("paths", []):
            if p.endswith(".service"):
                names.setdefault(p.rsplit("/", 1)[-1], p)
    patterns = [p for d in present for p in (f"{d}/*.service", f"{d}/*.service.d/*.conf")]
    greps = await ctx.tools([("grep", {"pattern": _CANDIDATE, "path": p, "max_matches": 1000})
                             for p in patterns])
    for p, got in zip(patterns, greps, strict=True):
        if (got or {}).get("files_capped"):  # said, never silent: a server may be past it
            read = (got or {}).get("files_searched")
            model.problems.append(f"{p} matches more files than one search reads ({read}): "
                                  "units past those were not searched")
    for result in greps:
        for m in (result or {}).get("matches", []):
            p = m["path"]
            wanted.add(p.split("/")[-2][:-2] if p.endswith(".conf") else p.rsplit("/", 1)[-1])
    if any((got or {}).get("capped") for got in listings):
        # A directory with more units than one listing holds: find each candidate's file
        # directly, so a large host cannot hide its server behind the cap.
        model.problems.append("a unit directory holds more files than one listing shows; "
                              "candidate units were looked up one by one")
        for name in sorted(wanted - set(names)):
            hits = await ctx.tools([("glob", {"pattern": f"{d}/{name}"}) for d in UNIT_DIRS])
            found = [p for got in _by_priority(hits) for p in (got or {}).get("paths", [])]
            if found:
                names[name] = found[0]  # the first lookup path wins
    out: list[tuple[str, str, str | None]] = []
    for name in sorted(wanted):
        if name not in names:
            continue
        if not name.endswith("@.service"):
            out.append((name, names[name], None))
            continue
        for inst in await _instances(ctx, name, listed):
            out.append((name.replace("@.", f"@{inst}."), names[name], inst))
    return out


def _by_priority(results: list[Any]) -> list[Any]:
    """Results per UNIT_DIRS entry, in systemd's lookup order (UNIT_PATHS: Debian's 252 reads
    /lib before /usr/lib); the calls themselves stay in UNIT_DIRS order."""
    rank = {d: UNIT_PATHS.index(d) for d in UNIT_DIRS}
    return [r for _, r in sorted(zip(UNIT_DIRS, results, strict=True),
                                 key=lambda pair: rank[pair[0]])]


async def _instances(ctx: RecipeContext, template: str, listed: dict[str, Any]) -> list[str]:
    prefix = template.split("@", 1)[0] + "@"
    found = {n[len(prefix) : -len(".service")] for n in listed
             if n.startswith(prefix) and n.endswith(".service") and n != template}
    links = await ctx.tool("glob", optional=True,
                           pattern=f"/etc/systemd/system/*.wants/{prefix}*.service")
    found |= {p.rsplit("/", 1)[-1][len(prefix) : -len(".service")]
              for p in (links or {}).get("paths", [])}
    return sorted(i for i in found if i)


async def _server(ctx: RecipeContext, name: str, path: str, instance: str | None,
                  model: HostModel) -> Server | None:
    args: dict[str, Any] = {"path": path, "format": "systemd"}
    if instance is not None:
        args["instance"] = instance
    parsed = await ctx.tool("parse_config", optional=True, **args)
    if not parsed:
        model.problems.append(f"{path}: could not be parsed")
        return None
    eff = parsed["effective"]
    start = eff.get("exec_start")
    if not start:
        return None
    env = {k: Setting(name=k, value=v["value"], source=v["source"], line=v["line"],
                      comment=v["comment"], evidence=[v["evidence_id"]],
                      origin=_origin(v["source"], eff["files"][0]))
           for k, v in eff["environment"].items()}
    argv = expand_exec(list(start["argv"]), {k: v.value for k, v in env.items()})
    server = Server(name=name, path=parsed["path"], files=list(eff["files"]), argv=argv,
                    argv_source=start["source"], argv_line=start["line"],
                    argv_evidence=[start["evidence_id"]], env=env,
                    user=(eff.get("user") or {}).get("name") or "root",
                    problems=list(eff.get("problems", [])))
    server.refused = eff.get("refused") or ""
    server.unresolved = list(eff.get("unresolved") or [])
    server.ignored = [Setting(name=d["name"], value=d["value"], source=d["source"],
                              line=d["line"], evidence=[d["evidence_id"]], origin="ignored",
                              comment=d["written"]) for d in eff.get("dropped") or []]
    for var, u in (eff.get("unset") or {}).items():
        server.removed[var] = Setting(name=var, value=u["value"], source=u["source"],
                                      line=u["line"], evidence=[u["evidence_id"]],
                                      origin="UnsetEnvironment", comment=u["set_at"])
    server.log_argv = journal_argv(name)
    workdir = next((e["value"] for e in parsed.get("entries", [])
                    if e["key"] == "Service.WorkingDirectory"), "/")
    await contain(ctx, server, model, workdir)  # docker run / compose up: in a container
    return server if await follow_command(ctx, server) else None


def _origin(source: str, unit_file: str) -> str:
    if source == unit_file:
        return "unit"
    if source == "/etc/systemd/system.conf" or "/systemd/system.conf.d/" in source:
        return "DefaultEnvironment"
    return "drop-in" if source.endswith(".conf") and ".service.d/" in source else "EnvironmentFile"


async def _states(ctx: RecipeContext, servers: list[Server], units_out: dict[str, Any] | None,
                  units: dict[str, Any]) -> None:
    # every read at once: the unit files' states, and per server its .wants links and journal
    got = await ctx.tools([("run_command", {"argv": LIST_UNIT_FILES}),
                           *[c for s in servers for c in (
                               ("glob", {"pattern": f"/etc/systemd/system/*.wants/{s.name}"}),
                               ("run_command", {"argv": journal_argv(s.name)}))]])
    files_out = got[0]
    files = _ok_lines(files_out, parse_list_unit_files)
    for i, s in enumerate(servers):
        links, journal = got[1 + 2 * i], got[2 + 2 * i]
        st = s.state
        if s.name in units and units_out:
            _load, active, sub, n = units[s.name]
            st.value = from_list_units(active, sub)
            st.detail = f"systemctl list-units: {active} ({sub})"
            st.evidence = [ctx.cite_output_line(units_out, n)]
        if s.name in files and files_out:
            state, n = files[s.name]
            # systemctl(1)'s is-enabled table: "linked" (systemctl link) only makes the unit
            # loadable, is-enabled exits 1 for it; enabling it as well shows "enabled"
            st.enabled = state in ("enabled", "enabled-runtime", "alias")
            st.enabled_detail = f"systemctl list-unit-files: {state}"
            st.enabled_evidence = [ctx.cite_output_line(files_out, n)]
        elif links is not None:
            st.enabled = bool(links["paths"])
            st.enabled_detail = (f"enabled: {', '.join(links['paths'])}" if links["paths"]
                                 else "no .wants/ link under /etc/systemd/system")
            st.enabled_evidence = [links["evidence_id"]]
        _journal_state(ctx, s, st, journal)


def _journal_state(ctx: RecipeContext, s: Server, st: State, out: dict[str, Any] | None
                   ) -> None:
    if not out or out["exit_code"] != 0:
        return
    lines = out["stdout"].splitlines()
    s.journal_lines = len(lines)
    life = journal_life(lines)
    st.restarts = life.restarts
    value, why = from_journal(life)
    if life.failure_line:
        s.failure = ctx.cite_output_line(out, life.failure_line)
        at = next((i for i in range(life.failure_line - 1, -1, -1) if _ERROR.search(lines[i])),
                  None)
        if at is not None:
            # an exception's detail often follows on the next lines (pydantic: "Value error, …")
            detail = next((lines[j] for j in range(at + 1, min(at + 5, life.failure_line))
                           if _DETAIL.search(lines[j])), "")
            s.cause = " ".join(_message(x) for x in (lines[at], detail) if x)[:400]
            s.failure = ctx.cite_output_line(out, at + 1)
        cvd = s.env.get("CUDA_VISIBLE_DEVICES")
        uuid_line = next((i for i in range(life.failure_line - 1, -1, -1)
                          if "invalid literal for int()" in lines[i] and "'GPU-" in lines[i]),
                         None)
        if cvd is not None and "GPU-" in cvd.value and uuid_line is not None:
            # vLLM versions that parse CUDA_VISIBLE_DEVICES as integers die on GPU UUIDs
            s.cause = (f"CUDA_VISIBLE_DEVICES ({cvd.where}) lists GPU UUIDs and the server "
                       f"parses it as integers: {_message(lines[uuid_line])}")
            s.failure = ctx.cite_output_line(out, uuid_line + 1)
    if st.value == "unknown" and value != "unknown":
        st.value, st.detail = value, why
        st.evidence = [ctx.cite_output_line(out, life.last_line or life.restart_line)]
    elif st.value == "failed" and value == "crash-looping":
        st.value, st.detail = value, f"{st.detail}; {why}"
        st.evidence.append(ctx.cite_output_line(out, life.restart_line))


def _ok_lines(out: dict[str, Any] | None, parse: Any) -> dict[str, Any]:
    if not out or out["exit_code"] != 0:
        return {}
    return parse(out["stdout"])
