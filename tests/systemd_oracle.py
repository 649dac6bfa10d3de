"""The real systemd as a test oracle, offline (never a running manager):

- ``systemd-analyze --root=DIR verify UNIT…``: the manager's own unit loader in test mode. Each
  generated file carries an unknown key ``XMark<id>=``; the loader warns about it with the file
  and line as it parses, so the warnings list the files the manager reads for each unit, in
  the order it reads them (fragment, then drop-ins).
- ``systemd-analyze --root=DIR cat-config systemd/system.conf``: system.conf and its drop-ins
  as the manager reads them.
- libsystemd-shared-252.so / libsystemd-core-252.so through ctypes: config_parse() with
  config_parse_environ()/config_parse_unset_environ() (unit and system.conf parsing, word
  splitting, quoting, escapes, empty-assignment resets) and load_env_file() (EnvironmentFile=).

Everything here skips (with the reason) where that systemd is not installed.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
from pathlib import Path

_LIBDIR = Path("/usr/lib/x86_64-linux-gnu/systemd")


def analyze_version() -> int | None:
    exe = shutil.which("systemd-analyze")
    if not exe:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    m = re.match(r"systemd (\d+)", out.stdout)
    return int(m.group(1)) if m else None


def verify_reads(root: Path, units: list[str]) -> dict[str, list[str] | str]:
    """unit name → the marked files the manager read for it, in order (paths inside root), or
    "masked" / "not-found". One call finds the masked and missing units, a second loads the
    rest: each of those has a fragment whose first marker is ``XUnit<k>=`` (k its index in
    ``units``), which splits the warnings per unit (a masked unit's drop-ins are still read,
    without a fragment marker, so it is left out of the second call)."""
    out: dict[str, list[str] | str] = {}
    for line in _verify(root, units).splitlines():
        m = re.match(r"^Unit (\S+) (is masked|not found)\.", line)
        if m:
            out[m.group(1)] = "masked" if m.group(2) == "is masked" else "not-found"
    rest = [u for u in units if u not in out]
    current: list[str] | None = None
    pat = re.compile(r"^(/\S+):\d+: Unknown key( name)? '(XUnit|XMark)(\d+)'")
    for line in _verify(root, rest).splitlines():
        m = pat.match(line)
        if not m:
            continue
        if m.group(3) == "XUnit":
            current = []
            out[units[int(m.group(4))]] = current
        if current is not None:
            current.append(m.group(1)[len(str(root)):])
    return out


def _verify(root: Path, units: list[str]) -> str:
    exe = shutil.which("systemd-analyze")
    assert exe
    if not units:
        return ""
    return subprocess.run([exe, f"--root={root}", "--no-pager", "verify", *units],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "LANG": "C"}).stderr


def cat_config(root: Path, names: list[str]) -> list[str]:
    """Files systemd-analyze cat-config shows for config names, in order (inside root)."""
    exe = shutil.which("systemd-analyze")
    assert exe
    out = subprocess.run([exe, f"--root={root}", "--no-pager", "cat-config", *names],
                         capture_output=True, text=True, check=False)
    return [line[2:][len(str(root)):] for line in out.stdout.splitlines()
            if line.startswith(f"# {root}/")]


class _Item(ctypes.Structure):
    _fields_ = [("section", ctypes.c_char_p), ("lvalue", ctypes.c_char_p),
                ("parse", ctypes.c_void_p), ("ltype", ctypes.c_int), ("data", ctypes.c_void_p)]


_PP = ctypes.POINTER(ctypes.c_char_p)


class Lib:
    """The few functions of systemd 252's private libraries these tests call."""

    def __init__(self) -> None:
        self.shared = ctypes.CDLL(str(_LIBDIR / "libsystemd-shared-252.so"),
                                  mode=ctypes.RTLD_GLOBAL)
        self.core = ctypes.CDLL(str(_LIBDIR / "libsystemd-core-252.so"))
        self.shared.config_parse.argtypes = [
            ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_char_p,
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        self.shared.load_env_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                              ctypes.POINTER(_PP)]
        self.shared.env_assignment_is_valid.argtypes = [ctypes.c_char_p]
        self.shared.env_assignment_is_valid.restype = ctypes.c_bool
        self.shared.strv_free.argtypes = [_PP]
        self.shared.strv_free.restype = None

    @staticmethod
    def available() -> str:
        """Empty when usable, else why not."""
        if not (_LIBDIR / "libsystemd-shared-252.so").exists():
            return f"libsystemd-shared-252.so not in {_LIBDIR} (systemd 252 not installed)"
        return ""

    def _strv(self, p: _PP) -> list[bytes]:
        out: list[bytes] = []
        i = 0
        while p and p[i] is not None:
            out.append(p[i])
            i += 1
        return out

    def parse_env_settings(self, files: list[str], section: bytes = b"Service",
                           key: bytes = b"Environment") -> tuple[list[bytes], list[bytes]]:
        """config_parse() over the files in order, one environment list for all (as the
        manager fills one ExecContext): (environment, UnsetEnvironment)."""
        env, unset = _PP(), _PP()
        items = (_Item * 3)(
            _Item(section, key, ctypes.cast(self.core.config_parse_environ, ctypes.c_void_p),
                  0, ctypes.cast(ctypes.pointer(env), ctypes.c_void_p)),
            _Item(section, b"UnsetEnvironment",
                  ctypes.cast(self.core.config_parse_unset_environ, ctypes.c_void_p), 0,
                  ctypes.cast(ctypes.pointer(unset), ctypes.c_void_p)),
            _Item(None, None, None, 0, None))
        lookup = ctypes.cast(self.shared.config_item_table_lookup, ctypes.c_void_p)
        for f in files:
            self.shared.config_parse(None, f.encode(), None, section + b"\0", lookup,
                                     ctypes.cast(items, ctypes.c_void_p), 0, None, None)
        out = self._strv(env), self._strv(unset)
        self.shared.strv_free(env)
        self.shared.strv_free(unset)
        return out

    def load_env_file(self, path: str) -> list[bytes] | None:
        """load_env_file() then strv_env_clean()'s validity filter; None when the file is
        refused as a whole (invalid UTF-8)."""
        data = _PP()
        r = self.shared.load_env_file(None, path.encode(), ctypes.byref(data))
        if r < 0:
            return None
        got = [a for a in self._strv(data) if self.shared.env_assignment_is_valid(a)]
        self.shared.strv_free(data)
        return got
