"""NCCL's own reading of its environment: which names it reads (nccl_params.json, extracted
from NCCL's source by tests/data_tools/nccl_params.py) and how it parses the values that
matter for tuning, each parser mirroring NCCL's C code (tests/test_nccl_values.py compares
them with what NCCL's own code gave on the inputs of tests/data/nccl_value_vectors.json):

- ``NCCL_PROTO``/``NCCL_ALGO``: ``parseList`` (src/graph/tuning.cc). ``;``-separated entries,
  each ``[function:]elem,elem`` or ``^elem,...`` (all but those); names compared with
  ``strcasecmp``; an unknown element or function name, or a later entry without a function
  prefix, is a WARN and ``ncclInvalidUsage``: the communicator is not created.
- ``NCCL_P2P_LEVEL``/``NCCL_NET_GDR_LEVEL``: ``ncclGetLevel`` (src/graph/paths.cc). An exact,
  case-sensitive path name, else a value whose first character is a digit is read with
  ``strtol`` as the old numbering (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS); anything else
  is ignored without a message. ``NCCL_P2P_DISABLE`` counts only when ``strtol`` gives 1.
- every ``NCCL_PARAM`` integer: ``ncclLoadParam`` (src/misc/param.cc), ``strtoll(s, 0, 0)``
  (decimal, 0x hex, 0 octal; text after the number ignored; no number reads as 0); out of
  range falls back to the default.

The parsers follow NCCL 2.30.7. Across the releases scanned (2.18 on) parseList reads values the
same way since 2.24 (only its memory handling changed); before 2.24 it had no ``function:``
prefixes. ncclGetLevel is the same since 2.18; its names grew (C2C in 2.26, P2C in 2.27). The
nccl-env task does not know the server's NCCL release, so these differences are not applied.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("nccl_params.json")
FUNCS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")
PROTOS = ("LL", "LL128", "Simple")
ALGOS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
PATHS = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")
OLD_LEVELS = (0, 4, 5, 8, 9, 9)  # levelsOldToNew: 0 LOC, 1 PIX, 2 PXB, 3 PHB, 4-5 SYS
UNSET, CRASH = -2, -3  # ncclGetLevel's "not set by the user"; NCCL reads out of bounds
INT64 = (-(2**63), 2**63 - 1)
LONG = INT64  # Linux x86-64/aarch64: long is 64 bits
_WS = " \t\n\v\f\r"
_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@cache
def params() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(DATA.read_text())
    return doc


def known(name: str) -> bool:
    """Whether a scanned NCCL release reads the name (older ones too: servers run them)."""
    return name in params()["variables"] or name in params()["no_longer_read"]


def near(name: str) -> str | None:
    """The variable NCCL does read that an unknown name most likely means (a typo)."""
    import difflib  # only for a name NCCL does not read: not on every start-up

    hits = difflib.get_close_matches(name, params()["variables"], n=1, cutoff=0.8)
    return hits[0] if hits else None


def _ieq(a: str, b: str) -> bool:  # strcasecmp in the C locale: ASCII letters only
    return a.translate(_FOLD) == b.translate(_FOLD)


def parse_list(value: str, elems: tuple[str, ...]) -> list[list[int]] | str:
    """parseList over every function: the enable matrix [function][element] (0 off, 1 on,
    2 NCCL decides; only LL128 starts at 2), or the reason NCCL refuses the value."""
    protos = elems == PROTOS
    table = [[2 if protos and e == 1 else 1 for e in range(len(elems))] for _ in FUNCS]
    for tok in re.finditer(r"[^;]+", value):
        parts = re.findall(r"[^:]+", tok.group())
        prefix: str | None = parts[0] if parts else None
        elem_list = parts[1] if len(parts) > 1 else None
        if elem_list is None:
            if tok.start() != 0:
                return f'"All entries except the first must have a prefix: \\"{value}\\""'
            if prefix is None:
                return "crash: a first entry made only of ':' makes NCCL read a null pointer"
            elem_list, prefix = prefix, None
        unset, setv = (1, 0) if elem_list.startswith("^") else (0, 1)
        elem_list = elem_list[1:] if unset else elem_list
        rows = [f for f in range(len(FUNCS)) if prefix is None or _ieq(prefix, FUNCS[f])]
        if not rows:
            return f'"Unrecognized prefix token \\"{prefix}\\" when parsing \\"{value}\\""'
        for f in rows:
            table[f] = [unset] * len(elems)
            for elem in re.findall(r"[^,]+", elem_list):
                hit = [e for e, name in enumerate(elems) if _ieq(elem, name)]
                if not hit:
                    return (f'"Unrecognized element token \\"{elem}\\" when parsing '
                            f'\\"{value}\\""')
                table[f][hit[0]] = setv
    return table


def strtol(s: str, bounds: tuple[int, int] = LONG) -> tuple[int, bool]:
    """C's strtol/strtoll with base 0: the value and whether it overflowed (ERANGE)."""
    i = 0
    while i < len(s) and s[i] in _WS:
        i += 1
    sign = 1
    if i < len(s) and s[i] in "+-":
        sign, i = (-1 if s[i] == "-" else 1), i + 1
    base, digits = 10, "0123456789"
    if s[i:i + 2].lower() == "0x" and i + 2 < len(s) and s[i + 2] in "0123456789abcdefABCDEF":
        base, digits, i = 16, "0123456789abcdefABCDEF", i + 2
    elif s[i:i + 1] == "0":
        base, digits = 8, "01234567"
    j = i
    while j < len(s) and s[j] in digits:
        j += 1
    n = sign * int(s[i:j], base) if j > i else 0
    if n < bounds[0]:
        return bounds[0], True
    if n > bounds[1]:
        return bounds[1], True
    return n, False


def _c_int(n: int) -> int:  # a long assigned to a C int: its low 32 bits, signed
    n &= 0xFFFFFFFF
    return n - 2**32 if n >= 2**31 else n


def parse_level(value: str | None) -> int:
    """ncclGetLevel without a disable variable: the PATH_* index, UNSET, or CRASH."""
    if value is None:
        return UNSET
    if value in PATHS:
        return PATHS.index(value)
    if value[:1].isdigit() and value[:1].isascii():
        old = _c_int(strtol(value)[0])
        if old < 0:
            return CRASH
        return OLD_LEVELS[min(old, len(OLD_LEVELS) - 1)]
    return UNSET


def parse_p2p(disable: str | None, level: str | None) -> int:
    """NCCL_P2P_DISABLE, then NCCL_P2P_LEVEL, as ncclGetUserP2pLevel reads them."""
    if disable is not None and _c_int(strtol(disable)[0]) == 1:
        return 0
    return parse_level(level)


def parse_int(value: str | None, default: int) -> int:
    """ncclLoadParam: the integer an NCCL_PARAM variable gives NCCL."""
    if not value:
        return default
    n, overflow = strtol(value, INT64)
    return default if overflow else n


@dataclass
class Reading:
    """What NCCL makes of one NCCL_* variable: whether it is read at all, whether the value
    is valid, and what it does, in words."""

    known: bool
    valid: bool
    effect: str


def _list_words(table: list[list[int]], elems: tuple[str, ...]) -> str:
    allreduce = table[FUNCS.index("AllReduce")]
    on = [e for e, v in zip(elems, allreduce, strict=True) if v == 1]
    auto = [e for e, v in zip(elems, allreduce, strict=True) if v == 2]
    words = ", ".join(on) or "none"
    if auto:
        words += f" ({', '.join(auto)} where NCCL's own rules enable it)"
    same = all(row == allreduce for row in table)
    return f"allreduce may use {words}" + ("" if same else "; other collectives differ")


def _level_words(name: str, value: str, level: int) -> Reading:
    if level == CRASH:
        return Reading(True, False, f"NCCL reads {value!r} as a negative old-style level and "
                                    "indexes outside its table (undefined behaviour)")
    if level == UNSET:
        return Reading(True, False, f"NCCL does not recognise {value!r} (names are "
                                    f"case-sensitive: {', '.join(PATHS)}, or numbers 0-5) and "
                                    "ignores it without a message, keeping its own default")
    if value in PATHS:
        return Reading(True, True, "")  # read as written: nothing to add
    return Reading(True, True, f"NCCL uses {PATHS[level]} (old numbering: {value!r} means "
                               f"{PATHS[level]})")


_NUMBER = re.compile(r"[ \t\n\v\f\r]*[+-]?(0[xX][0-9a-fA-F]|[0-9])")
_LITERAL = re.compile(r"[ \t\n\v\f\r]*[+-]?(0[xX][0-9a-fA-F]+|[1-9][0-9]*|0)[ \t\n\v\f\r]*")


def _int_reading(value: str, default: str) -> Reading:
    """An NCCL_PARAM integer as ncclLoadParam reads it: in effect unless empty, out of range
    (default) or without a number at all (strtoll gives 0: "true" turns nothing on)."""
    if not value:
        return Reading(True, False, f"empty, so NCCL uses its default ({default})")
    n, overflow = strtol(value, INT64)
    if overflow:
        return Reading(True, False, f"out of range, so NCCL uses its default ({default})")
    if not _NUMBER.match(value):
        return Reading(True, False, f"NCCL reads {value!r} as 0: it takes only integers "
                                    "(strtoll), so a word like true or yes means 0")
    if _LITERAL.fullmatch(value):
        return Reading(True, True, "")  # read as written: nothing to add
    why = ("a leading 0 makes strtoll read octal" if re.match(r"\s*[+-]?0[0-7]", value)
           and not re.match(r"\s*[+-]?0[xX]", value) else "strtoll stops at the first non-digit")
    return Reading(True, True, f"NCCL reads {value!r} as {n} ({why})")


def reading(name: str, value: str, env: dict[str, str] | None = None) -> Reading:
    """NCCL's reading of NAME=VALUE; ``env`` holds the other NCCL_* values (for the pair
    NCCL_P2P_DISABLE/NCCL_P2P_LEVEL)."""
    env = env or {}
    if not known(name):
        hint = near(name)
        scanned = params()["releases_scanned"]
        return Reading(False, False, f"no NCCL release from {scanned[0]} to {scanned[-1]} "
                                     "reads a variable of that name, so it has no effect"
                                     + (f" (did you mean {hint}?)" if hint else ""))
    old = params()["no_longer_read"].get(name)
    if old is not None:
        return Reading(True, True, f"read by NCCL {old['releases'][0]} to "
                                   f"{old['releases'][-1]} only; NCCL "
                                   f"{params()['nccl_version']} no longer reads it")
    if name in ("NCCL_PROTO", "NCCL_ALGO"):
        elems = PROTOS if name == "NCCL_PROTO" else ALGOS
        if not value.strip(";"):  # strtok_r finds no entry: every enable keeps its default
            what = "protocols" if name == "NCCL_PROTO" else "algorithms"
            return Reading(True, False, f"empty, so NCCL uses its default {what}")
        got = parse_list(value, elems)
        if isinstance(got, str):
            fate = ("NCCL crashes reading it" if got.startswith("crash") else
                    f"NCCL rejects it ({got}) and fails to create the communicator "
                    "(ncclInvalidUsage), so the server cannot start its tensor-parallel group")
            return Reading(True, False, fate)
        return Reading(True, True, _list_words(got, elems))
    if name in ("NCCL_P2P_LEVEL", "NCCL_NET_GDR_LEVEL"):
        if name == "NCCL_P2P_LEVEL" and parse_p2p(env.get("NCCL_P2P_DISABLE"), None) == 0:
            return Reading(True, True, "NCCL never reads it: NCCL_P2P_DISABLE=1 is set")
        return _level_words(name, value, parse_level(value))
    if name == "NCCL_P2P_DISABLE":
        on = _c_int(strtol(value)[0]) == 1
        return Reading(True, True, "peer-to-peer is off" if on else
                       f"NCCL reads {value!r} as {_c_int(strtol(value)[0])}, not 1, so "
                       "peer-to-peer stays on")
    row = params()["variables"][name]
    if "NCCL_PARAM" in row["read_by"]:
        return _int_reading(value, str(row["default"]))
    return Reading(True, True, "")
