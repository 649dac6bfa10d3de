"""Generated unit trees for the differential tests: many units in one root, each with its
fragment somewhere in the lookup paths (sometimes several copies, sometimes masked), drop-ins
in every kind of drop-in directory systemd reads (own, template, dash prefix, type-wide), with
same-named files across directories, hidden and non-.conf files, links to /dev/null and
dangling links, and Environment=/UnsetEnvironment= lines whose composition is compared too.

Every file carries ``XUnit<k>=`` (fragments) or ``XMark<n>=`` (drop-ins) so the manager's
warnings tell which files it read (tests/systemd_oracle.py)."""

from __future__ import annotations

import os
import random
from dataclasses import dataclass, field
from pathlib import Path

# The lookup paths a generated tree uses: the common ones, /lib beside /usr/lib (separate
# directories, as in a snapshot of a host without merged /usr), the control and attached ones.
# Not the generator and transient directories: the manager fills those at run time and
# `systemd-analyze --root` does not read them.
DIRS = ("/etc/systemd/system", "/run/systemd/system", "/usr/local/lib/systemd/system",
        "/lib/systemd/system", "/usr/lib/systemd/system", "/etc/systemd/system.control",
        "/run/systemd/system.control", "/etc/systemd/system.attached",
        "/run/systemd/system.attached")
COMMON = DIRS[:5]
CONF_NAMES = ("10-a.conf", "20-b.conf", "50-x.conf", "a.conf", "B.conf", "_z.conf",
              "override.conf", "99-last.conf")
JUNK_NAMES = (".hidden.conf", "x.conf.bak", "notes.txt", "x.conf~", "conf")
VARS = ("NCCL_PROTO", "NCCL_P2P_LEVEL", "V1", "V2")


@dataclass
class Tree:
    root: Path
    units: list[str] = field(default_factory=list)
    marks: int = 0


def _names(rnd: random.Random, k: int) -> str:
    shape = rnd.randrange(9)
    base = f"u{k}"
    return [f"{base}.service", f"{base}-srv.service", f"grp-{base}.service",
            f"grp-{base}-x.service", f"{base}-a-b.service", f"{base}@inst.service",
            f"grp-{base}@i-x.service", f"{base}-.service", f"{base}@x\\x2dy.service"][shape]


def _dirnames(unit: str) -> list[str]:
    """The names whose .d directories may hold drop-ins for this unit (a superset: the
    generator does not decide which apply, systemd does)."""
    stem, _, kind = unit.rpartition(".")
    prefix, at, inst = stem.partition("@")
    out = [unit]
    if at:
        out.append(f"{prefix}@.{kind}")
    parts = prefix.split("-")
    for i in range(1, len(parts)):
        p = "-".join(parts[:i]) + "-"
        out.append(f"{p}.{kind}")
        if at:
            out += [f"{p}@{inst}.{kind}", f"{p}@.{kind}"]
    return out


def _body(rnd: random.Random, marker: str) -> str:
    lines = ["[Service]", f"{marker}=1"]
    for _ in range(rnd.randrange(3)):
        var = rnd.choice(VARS)
        r = rnd.random()
        if r < 0.1:
            lines.append("Environment=")
        elif r < 0.2:
            lines.append(f"UnsetEnvironment={var}")
        elif r < 0.3:
            lines.append(f'Environment="{var}=a b" {rnd.choice(VARS)}=c')
        else:
            lines.append(f"Environment={var}={marker}")
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        return
    path.write_text(text)


def _link(path: Path, target: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not (path.is_symlink() or path.exists()):
        os.symlink(target, path)


def generate(root: Path, seed: int, n_units: int) -> Tree:
    rnd = random.Random(seed)
    tree = Tree(root)
    for k in range(n_units):
        unit = _names(rnd, k)
        tree.units.append(unit)
        frag_name = unit
        stem, _, kind = unit.rpartition(".")
        if "@" in unit and rnd.random() < 0.7:  # usually only the template exists
            frag_name = f"{stem.split('@')[0]}@.{kind}"
        frag = (f"[Unit]\nDefaultDependencies=no\n[Service]\nXUnit{k}=1\n"
                "ExecStart=/bin/true\n")
        copies = rnd.sample(COMMON, rnd.choice((1, 1, 1, 2)))
        for d in copies:
            _write(root / d.lstrip("/") / frag_name, frag)
        if rnd.random() < 0.05:  # masked above the real one
            mask = root / "etc/systemd/system" / frag_name
            if not mask.exists():
                _link(mask, "/dev/null") if rnd.random() < 0.5 else _write(mask, "")
        if "@" not in unit and rnd.random() < 0.15:  # an alias: Alias= / systemctl enable
            alias = rnd.choice((f"al{k}.service", f"al{k}-x.service", f"grp-al{k}.service"))
            # to one of its files (as `systemctl enable` links); a dangling alias is left out:
            # systemd maps it by name, agentkit follows links to files that exist
            target = rnd.choice(copies) + "/" + unit
            _link(root / rnd.choice(COMMON).lstrip("/") / alias, target)
            for _ in range(rnd.randrange(1, 4)):
                tree.marks += 1
                name = rnd.choice(_dirnames(alias))
                _dropin(rnd, root / rnd.choice(COMMON).lstrip("/") / f"{name}.d", tree.marks)
        for _ in range(rnd.randrange(6)):
            tree.marks += 1
            d = rnd.choice(DIRS if rnd.random() < 0.3 else COMMON)
            name = rnd.choice(_dirnames(unit))
            _dropin(rnd, root / d.lstrip("/") / f"{name}.d", tree.marks)
    for _ in range(rnd.randrange(4)):  # type-wide drop-ins, for every unit of the root
        tree.marks += 1
        _dropin(rnd, root / rnd.choice(COMMON).lstrip("/") / "service.d", tree.marks)
    return tree


def _dropin(rnd: random.Random, d: Path, mark: int) -> None:
    r = rnd.random()
    if r < 0.08:
        _link(d / rnd.choice(CONF_NAMES), "/dev/null")
    elif r < 0.12:
        _link(d / rnd.choice(CONF_NAMES), "/nonexistent/target.conf")
    elif r < 0.17:
        _write(d / rnd.choice(JUNK_NAMES), f"[Service]\nXMark{mark}=1\n")
    elif r < 0.19:
        (d / "dir.conf").mkdir(parents=True, exist_ok=True)
    else:
        _write(d / rnd.choice(CONF_NAMES), _body(rnd, f"XMark{mark}"))
