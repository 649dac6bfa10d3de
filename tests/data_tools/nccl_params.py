"""Regenerate agentkit/_hostmodel/nccl_params.json (every environment variable NCCL reads:
names, defaults, file:line, releases) from an NCCL source tree. Facts only: it reads NCCL's
source but writes no code and builds nothing.

    python -m tests.data_tools.nccl_params GIT_DIR [--commit REV]

GIT_DIR is a clone (bare or not) of github.com/NVIDIA/nccl. Names are taken from what the C++
sources under src/ read: ``NCCL_PARAM(Name, "X", default)`` (read as ``NCCL_X``),
``DEFINE_NCCL_PARAM(name, type, NCCL_X, default, ...)``, ``ncclGetEnv("NCCL_X")``,
``getenv("NCCL_X")`` and the two names ``ncclGetLevel`` is given. Build-time scripts (.py)
and bundled third-party code that reads its own prefix (DOCA_) are not NCCL's runtime.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT_JSON = REPO / "agentkit/_hostmodel/nccl_params.json"
SOURCE_EXT = (".cc", ".cu", ".h", ".cpp", ".c", ".cuh", ".hpp")

_GETENV = re.compile(r'\b(ncclGetEnv|std::getenv|getenv)\(\s*"(NCCL_[A-Z0-9_]+)"\s*\)')
_LEVEL = re.compile(r'ncclGetLevel\([^,]+,\s*(?:"(NCCL_[A-Z0-9_]+)"|NULL)\s*,'
                    r'\s*"(NCCL_[A-Z0-9_]+)"')


def git(gitdir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True,
                          capture_output=True, text=True).stdout


def _args(text: str, start: int) -> list[str]:
    """The top-level comma-separated arguments of the call whose '(' is at text[start]."""
    depth, cur, out, quote = 0, "", [], False
    for ch in text[start:]:
        if ch == '"' and (not cur or cur[-1] != "\\"):
            quote = not quote
        if not quote and ch in "([{":
            depth += 1
            if depth == 1:
                continue
        if not quote and ch in ")]}":
            depth -= 1
            if depth == 0:
                out.append(cur.strip())
                return out
        if not quote and ch == "," and depth == 1:
            out.append(cur.strip())
            cur = ""
            continue
        cur += ch
    raise ValueError("unbalanced call")


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def scan(path: str, text: str, found: dict[str, dict]) -> None:
    def add(name: str, how: str, pos: int, default: str | None = None) -> None:
        row = found.setdefault(name, {"read_by": [], "default": None, "at": []})
        if how not in row["read_by"]:
            row["read_by"].append(how)
        if default is not None and row["default"] is None:
            row["default"] = default
        row["at"].append(f"{path}:{_line(text, pos)}")

    for m in re.finditer(r"\bNCCL_PARAM\(", text):
        if text[max(0, m.start() - 8):m.start()].endswith("define "):
            continue
        args = _args(text, m.end() - 1)
        if len(args) == 3 and re.fullmatch(r'"[A-Z0-9_]+"', args[1]):
            add("NCCL_" + args[1].strip('"'), "NCCL_PARAM", m.start(), args[2])
    for m in re.finditer(r"\bDEFINE_NCCL_PARAM\(", text):
        if text[max(0, m.start() - 8):m.start()].endswith("define "):
            continue
        args = _args(text, m.end() - 1)
        if len(args) >= 4 and re.fullmatch(r"NCCL_[A-Z0-9_]+", args[2]):
            add(args[2], "DEFINE_NCCL_PARAM", m.start(), args[3])
    for m in _GETENV.finditer(text):
        add(m.group(2), m.group(1).replace("std::", ""), m.start())
    for m in _LEVEL.finditer(text):
        if m.group(1):
            add(m.group(1), "ncclGetLevel", m.start())
        add(m.group(2), "ncclGetLevel", m.start())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gitdir")
    ap.add_argument("--commit", default="HEAD")
    a = ap.parse_args(argv)
    rev = git(a.gitdir, "rev-parse", a.commit).strip()
    version = dict(re.findall(r"^(NCCL_MAJOR|NCCL_MINOR|NCCL_PATCH)\s*:=\s*(\d+)",
                              git(a.gitdir, "show", f"{rev}:makefiles/version.mk"), re.M))
    files = [f for f in git(a.gitdir, "ls-tree", "-r", "--name-only", rev, "src").splitlines()
             if f.endswith(SOURCE_EXT) and "/doca-gpunetio/" not in f]
    found: dict[str, dict] = {}
    read_from = []
    for f in files:
        text = git(a.gitdir, "show", f"{rev}:{f}")
        before = sum(len(r["at"]) for r in found.values())
        scan(f, text, found)
        if sum(len(r["at"]) for r in found.values()) > before:
            read_from.append(f)
    doc = {
        "about": "Every environment variable NCCL's runtime (src/) reads, extracted from its "
                 "source by tests/data_tools/nccl_params.py; default is the macro's default "
                 "as written in the source (null where the variable is read as a string).",
        "nccl_version": f"{version['NCCL_MAJOR']}.{version['NCCL_MINOR']}.{version['NCCL_PATCH']}",
        "source": "https://github.com/NVIDIA/nccl",
        "commit": rev,
        "files": read_from,
        "variables": {k: found[k] for k in sorted(found)},
    }
    OUT_JSON.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(found)} variables from {len(read_from)} files at {rev[:12]} "
          f"(NCCL {doc['nccl_version']})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
