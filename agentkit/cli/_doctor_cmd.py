"""``agentkit doctor``: what this machine gives agentkit, each gap with its fix.

The kernel layer (bubblewrap, user namespaces, the sandbox mode in force and why), NVML, the
configured model endpoint (only when one is configured), where the settings come from, and
the trace directory with its size. Nothing here changes the machine; exit 10 when something
agentkit was asked to use cannot work (a required sandbox, a configured model), else 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass
from typing import Any

from ._errors import CLIError

_FAIL_CODE = 10


@dataclass
class Check:
    """One line of the report: ``ok``, ``note`` (fine, worth knowing), ``warn`` (works, less
    well) or ``fail`` (what was asked for cannot work), and the fix when there is one."""

    area: str
    state: str
    detail: str
    fix: str = ""


def register(sub: Any) -> None:
    p = sub.add_parser("doctor", help="what this machine gives agentkit, with the fix for "
                       "each gap", description="Checks the kernel sandbox (bubblewrap, user "
                       "namespaces, the mode in force), NVML, the configured model endpoint, "
                       "the config sources and the trace directory. Changes nothing. Exit 10 "
                       "when something agentkit is configured to use cannot work.")
    p.add_argument("--json", action="store_true", help="the checks as a JSON list")
    p.add_argument("--config", metavar="FILE", help="TOML config file to check instead of "
                   "$AGENTKIT_CONFIG or ~/.config/agentkit/config.toml")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    checks = [*kernel_checks(), nvml_check(), *config_and_model_checks(args.config),
              trace_check()]
    if args.json:
        sys.stdout.write(json.dumps([asdict(c) for c in checks], indent=2) + "\n")
    else:
        for c in checks:
            sys.stdout.write(f"{c.state:<5} {c.area:<15} {c.detail}\n")
            if c.fix:
                sys.stdout.write(f"{'':<21} fix: {c.fix}\n")
    return _FAIL_CODE if any(c.state == "fail" for c in checks) else 0


def kernel_checks() -> list[Check]:
    """bubblewrap, user namespaces, and the mode commands run under with the reason."""
    from .._sandbox import _kernel
    from .._sandbox._host import sandbox_setting

    raw = os.environ.get("AGENTKIT_SANDBOX")
    try:
        setting = sandbox_setting(raw)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    bwrap = _kernel.BWRAP
    present = os.access(bwrap, os.X_OK)
    out = [Check("bubblewrap", "ok", f"installed at {bwrap}") if present else
           Check("bubblewrap", "warn" if setting != "kernel" else "fail",
                 f"not installed at {bwrap}: commands cannot run under the kernel layer",
                 "install it (Debian/Ubuntu: apt install bubblewrap; Fedora/RHEL: dnf "
                 "install bubblewrap)")]
    out.append(_userns_check())
    why = _kernel._probe(bwrap) if setting != "allowlist" else None
    source = f"AGENTKIT_SANDBOX={raw}" if raw else "the default (auto)"
    if setting == "allowlist":
        out.append(Check("sandbox mode", "note", f"allowlist-only, set by {source}: commands "
                         "are checked by the allowlist, without the kernel layer",
                         "unset AGENTKIT_SANDBOX (auto) to use bubblewrap where it works"))
    elif why is None:
        out.append(Check("sandbox mode", "ok", f"kernel, from {source}: every command runs "
                         "under bubblewrap (read-only root, no network, credential paths "
                         "not mounted)"))
    elif setting == "kernel":
        out.append(Check("sandbox mode", "fail", f"refused, from {source}: the kernel layer "
                         f"is required but {why}; every command will be refused",
                         "fix the lines above, or set AGENTKIT_SANDBOX=auto"))
    else:
        out.append(Check("sandbox mode", "warn", f"allowlist-only, from {source}: {why}",
                         "fix the lines above; AGENTKIT_SANDBOX=kernel refuses commands "
                         "instead of running them without it"))
    return out


# sysctl files that can forbid what bubblewrap does without privileges, and the value that
# forbids: Debian's switch, the namespace limit, Ubuntu's AppArmor restriction (23.10+)
_USERNS = (("/proc/sys/kernel/unprivileged_userns_clone", "0",
            "sysctl -w kernel.unprivileged_userns_clone=1"),
           ("/proc/sys/user/max_user_namespaces", "0",
            "sysctl -w user.max_user_namespaces=15000"),
           ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
            "give bwrap an AppArmor profile that allows userns (Ubuntu ships "
            "bwrap-userns-restrict), or sysctl -w "
            "kernel.apparmor_restrict_unprivileged_userns=0"))


def _userns_check() -> Check:
    if os.geteuid() == 0:
        return Check("namespaces", "ok", "running as root: bubblewrap does not need "
                     "unprivileged user namespaces")
    for path, forbids, fix in _USERNS:
        try:
            with open(path, encoding="ascii") as f:
                value = f.read().strip()
        except OSError:
            continue  # this kernel has no such switch
        if value == forbids:
            return Check("namespaces", "warn", f"unprivileged user namespaces are off here "
                         f"({path} is {value})", fix)
    return Check("namespaces", "ok", "unprivileged user namespaces allowed")


def nvml_check() -> Check:
    from .._sandbox._gpu import read_nvml

    try:
        got = read_nvml()
    except Exception as exc:  # no driver, no library: both say why in their message
        return Check("NVML", "note", f"{exc}; only questions about this "
                     "machine's own GPUs need it, a snapshot carries its capture",
                     "on a GPU host: install the NVIDIA driver (it brings libnvidia-ml)")
    gpus = got.get("gpus") or []
    return Check("NVML", "ok", f"driver {got.get('driver_version', '?')}, "
                 f"{len(gpus)} GPU{'' if len(gpus) == 1 else 's'}")


def config_and_model_checks(config_file: str | None) -> list[Check]:
    from .._config import ConfigError, load_settings

    source = _config_source(config_file)
    names = sorted(k for k in os.environ if k.startswith("AGENTKIT_"))
    env = f"; environment: {', '.join(names)}" if names else "; no AGENTKIT_* variables"
    try:
        settings = load_settings(config_file)
    except ConfigError as exc:
        return [Check("config", "fail", f"{source}{env}: {exc}",
                      "fix the setting named, or remove it")]
    out = [Check("config", "ok", source + env)]
    if not settings.llm_configured:
        out.append(Check("model", "note", "none configured: catalog mode answers",
                         "for open-ended questions set AGENTKIT_BASE_URL and AGENTKIT_MODEL "
                         "(or base_url and model in the config file)"))
    else:
        out.append(endpoint_check(settings))
    return out


def _config_source(config_file: str | None) -> str:
    from pathlib import Path

    if config_file:
        return f"config file {config_file} (--config)"
    if os.environ.get("AGENTKIT_CONFIG"):
        return f"config file {os.environ['AGENTKIT_CONFIG']} ($AGENTKIT_CONFIG)"
    xdg = os.environ.get("XDG_CONFIG_HOME") or ""
    base = Path(xdg) if xdg.startswith("/") else Path.home() / ".config"
    default = base / "agentkit" / "config.toml"
    return f"config file {default}" if default.is_file() else f"no config file ({default} " \
        "does not exist)"


def endpoint_check(settings: Any) -> Check:
    """``GET {base_url}/models`` (OpenAI and Anthropic both list models there): reachable,
    and the configured model among those listed."""
    import httpx

    url = settings.base_url.rstrip("/") + "/models"
    headers = {"anthropic-version": "2023-06-01"} if settings.provider == "anthropic" else {}
    key = settings.api_key()
    if key:
        headers.update({"x-api-key": key} if settings.provider == "anthropic"
                       else {"Authorization": f"Bearer {key}"})
    where = f"{settings.model} at {settings.base_url}"
    try:
        resp = httpx.get(url, headers=headers, timeout=5.0)
    except httpx.HTTPError as exc:
        return Check("model", "fail", f"{where}: {url} is not reachable ({exc})",
                     "start the server, or correct AGENTKIT_BASE_URL / --base-url")
    if resp.status_code in (401, 403):
        src = settings.api_key_source()
        return Check("model", "fail", f"{where}: the endpoint refused the key (HTTP "
                     f"{resp.status_code})", f"set {src} to a key this endpoint accepts")
    try:
        ids = [str(m.get("id")) for m in resp.json().get("data", [])]
    except (ValueError, AttributeError):
        ids = []
    if resp.status_code != 200 or not ids:
        return Check("model", "warn", f"{where}: reachable, but {url} gave HTTP "
                     f"{resp.status_code} and no model list; the model could not be checked")
    if settings.model not in ids:
        return Check("model", "fail", f"{where}: the endpoint does not list this model "
                     f"(it lists {', '.join(ids[:8])}{' …' if len(ids) > 8 else ''})",
                     "set AGENTKIT_MODEL / --model to one it lists")
    return Check("model", "ok", f"{where}: reachable, model listed")


def trace_check() -> Check:
    from .._trace._files import trace_dir, trace_files

    base = trace_dir()
    if not os.path.isdir(base):
        parent = os.path.dirname(base.rstrip("/")) or "/"
        while not os.path.isdir(parent):
            parent = os.path.dirname(parent)
        if os.access(parent, os.W_OK):
            return Check("traces", "ok", f"{base} (not created yet; made on the first run)")
        return Check("traces", "fail", f"{base} cannot be created ({parent} is not "
                     "writable)", "set AGENTKIT_TRACE_DIR to a writable directory")
    files = trace_files(base)
    size = sum(f.size for f in files)
    if not os.access(base, os.W_OK):
        return Check("traces", "fail", f"{base} is not writable",
                     "set AGENTKIT_TRACE_DIR to a writable directory")
    return Check("traces", "ok", f"{base}: {len(files)} run{'' if len(files) == 1 else 's'}, "
                 f"{size / 1e6:.1f} MB (see agentkit trace list)")
