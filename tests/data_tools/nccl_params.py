"""Regenerate agentkit/_hostmodel/nccl_params.json (every environment variable NCCL reads:
names, defaults, file:line, releases) from an NCCL source tree. Facts only: it reads NCCL's
source but writes no code and builds nothing.

    python -m tests.data_tools.nccl_params GIT_DIR [--commit REV] [--oldest 2.18]

GIT_DIR is a clone (bare or not) of github.com/NVIDIA/nccl. Names are taken from what the C++
sources under src/ read: ``NCCL_PARAM(Name, "X", default)`` (read as ``NCCL_X``),
``DEFINE_NCCL_PARAM(name, type, NCCL_X, default, ...)``, ``ncclGetEnv("NCCL_X")``,
``getenv("NCCL_X")`` and the two names ``ncclGetLevel`` is given. Build-time scripts (.py)
and bundled third-party code that reads its own prefix (DOCA_) are not NCCL's runtime.
The last release of each minor version from --oldest on is scanned as well, so that a name only
an older NCCL reads (servers pin older NCCLs) is recorded under no_longer_read, not as a typo.
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


def _version(gitdir: str, rev: str) -> str:
    v = dict(re.findall(r"^(NCCL_MAJOR|NCCL_MINOR|NCCL_PATCH)\s*:=\s*(\d+)",
                        git(gitdir, "show", f"{rev}:makefiles/version.mk"), re.M))
    return f"{v['NCCL_MAJOR']}.{v['NCCL_MINOR']}.{v['NCCL_PATCH']}"


def _sources(gitdir: str, rev: str) -> dict[str, str]:
    """Every runtime source file under src/ at rev, read in one git cat-file batch."""
    files = [f for f in git(gitdir, "ls-tree", "-r", "--name-only", rev, "src").splitlines()
             if f.endswith(SOURCE_EXT) and "/doca-gpunetio/" not in f]
    out = subprocess.run(["git", "--git-dir", gitdir, "cat-file", "--batch"], check=True,
                         input="".join(f"{rev}:{f}\n" for f in files).encode(),
                         capture_output=True).stdout
    texts, pos = {}, 0
    for f in files:
        header_end = out.index(b"\n", pos)
        size = int(out[pos:header_end].split()[2])
        texts[f] = out[header_end + 1:header_end + 1 + size].decode("utf-8", "replace")
        pos = header_end + 1 + size + 1
    return texts


def _releases(gitdir: str, oldest: str) -> list[str]:
    """The last tag of each minor release from ``oldest`` on (v2.18.6-1, v2.19.4-1, ...)."""
    last: dict[tuple[int, int], tuple[int, str]] = {}
    for tag in git(gitdir, "tag").split():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)-\d+", tag)
        if m and (int(m[1]), int(m[2])) >= tuple(map(int, oldest.split(".")[:2])):
            key = (int(m[1]), int(m[2]))
            last[key] = max(last.get(key, (-1, "")), (int(m[3]), tag))
    return [last[k][1] for k in sorted(last)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gitdir")
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--oldest", default="2.18", help="oldest minor release scanned for names")
    a = ap.parse_args(argv)
    rev = git(a.gitdir, "rev-parse", a.commit).strip()
    version = _version(a.gitdir, rev)
    found: dict[str, dict] = {}
    read_from = []
    for f, text in _sources(a.gitdir, rev).items():
        before = sum(len(r["at"]) for r in found.values())
        scan(f, text, found)
        if sum(len(r["at"]) for r in found.values()) > before:
            read_from.append(f)
    # Servers run older NCCLs: a name an older release read is not a typo there.
    seen: dict[str, list[str]] = {k: [version] for k in found}
    releases = [t for t in _releases(a.gitdir, a.oldest) if _version(a.gitdir, t) != version]
    for tag in releases:
        older: dict[str, dict] = {}
        for f, text in _sources(a.gitdir, tag).items():
            scan(f, text, older)
        for k in older:
            seen.setdefault(k, []).append(_version(a.gitdir, tag))
    for k, row in found.items():
        row["releases"] = sorted(seen[k], key=lambda v: tuple(map(int, v.split("."))))
    gone = {k: {"releases": sorted(v, key=lambda v: tuple(map(int, v.split("."))))}
            for k, v in seen.items() if k not in found}
    doc = {
        "about": "Every environment variable NCCL's runtime (src/) reads, extracted from its "
                 "source by tests/data_tools/nccl_params.py; default is the macro's default "
                 "as written in the source (null where the variable is read as a string); "
                 "releases are the scanned releases (the last of each minor) that read it; "
                 "no_longer_read: names only older releases read.",
        "nccl_version": version,
        "source": "https://github.com/NVIDIA/nccl",
        "commit": rev,
        "releases_scanned": sorted({version, *(_version(a.gitdir, t) for t in releases)},
                                   key=lambda v: tuple(map(int, v.split(".")))),
        "files": read_from,
        "variables": {k: found[k] for k in sorted(found)},
        "no_longer_read": {k: gone[k] for k in sorted(gone)},
    }
    OUT_JSON.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"{len(found)} variables from {len(read_from)} files at {rev[:12]} "
          f"(NCCL {version}); {len(gone)} more only in {releases[0] if releases else '-'}.."
          f"{releases[-1] if releases else '-'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
