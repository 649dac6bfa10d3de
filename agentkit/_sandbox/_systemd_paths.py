"""Where systemd 252 looks: unit lookup paths, a unit's drop-in files, system.conf and its
drop-ins, and EnvironmentFile= wildcards (differentially tested against ``systemd-analyze
--root=DIR verify``/``cat-config`` in tests/test_systemd_truth.py).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable

# The system manager's unit lookup paths, highest priority first, as Debian's systemd 252
# prints them (`systemd-analyze unit-paths`): /lib before /usr/lib (a split-usr build; on a
# merged-/usr host they are the same directory). Generator and control directories are
# included: a snapshot may hold them.
UNIT_PATHS = (
    "/etc/systemd/system.control", "/run/systemd/system.control", "/run/systemd/transient",
    "/run/systemd/generator.early", "/etc/systemd/system", "/etc/systemd/system.attached",
    "/run/systemd/system", "/run/systemd/system.attached", "/run/systemd/generator",
    "/usr/local/lib/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system",
    "/run/systemd/generator.late")
# Configuration directories (CONF_PATHS of a split-usr build: /lib last, unlike the unit
# paths), for system.conf.d.
CONF_PATHS = ("/etc", "/run", "/usr/local/lib", "/usr/lib", "/lib")

ListDir = Callable[[str], list[str]]


def _split(name: str) -> tuple[str, str, str | None]:
    """(prefix, type, instance) of a unit name; instance None for a plain unit, "" for a
    template."""
    stem, _, kind = name.rpartition(".")
    prefix, at, instance = stem.partition("@")
    return prefix, kind, (instance if at else None)


def _dir_names(name: str) -> list[str]:
    """unit_file_find_dirs(): the unit's own name, its template (for an instance), then its
    dash prefixes, each of those again with their templates; most specific first."""
    out = [name]
    prefix, kind, instance = _split(name)
    if instance:
        out += _dir_names(f"{prefix}@.{kind}")
    cut = _dash_parent(prefix)
    if cut is None:
        return out
    # an instance keeps its instance on the dash prefix; a template's prefix is a plain name
    built = f"{cut}@{instance}.{kind}" if instance else f"{cut}.{kind}"
    return out + _dir_names(built)


def _dash_parent(prefix: str) -> str | None:
    """``foo-bar-waldo`` → ``foo-bar-``; ``foo-bar-`` → ``foo-``; ``foo`` or ``-foo`` →
    None (a trailing dash is chopped once, a leading dash ends the walk)."""
    chopped = False
    while True:
        dash = prefix.rfind("-")
        if dash <= 0:
            return None
        if dash + 1 < len(prefix) or chopped:
            return prefix[:dash + 1]
        prefix, chopped = prefix[:dash], True


def drop_in_dirs(unit_name: str, aliases: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The drop-in directories of a unit in the order systemd builds the list
    (unit_file_find_dropin_paths()): for each lookup path the name's directories, then the same
    for each alias, then for each lookup path the type-wide one (``service.d``)."""
    kind = unit_name.rpartition(".")[2]
    dirs: list[str] = []
    for name in (unit_name, *aliases):
        names = list(dict.fromkeys(_dir_names(name)))
        dirs += [f"{base}/{n}.d" for base in UNIT_PATHS for n in names]
    return dirs + [f"{base}/{kind}.d" for base in UNIT_PATHS]


def aliases(unit_name: str, fragment_path: str, links: ListDir,
            canonical: Callable[[str], str | None]) -> list[str]:
    """Other names of the unit (``Alias=``, ``systemctl enable``): links in the lookup paths,
    of the same type, that lead to a file of the unit's name in a lookup path (systemd maps
    aliases by name, unit_file_build_name_map()) or to the fragment itself (a linked file)."""
    kind = unit_name.rpartition(".")[2]
    fragment = canonical(fragment_path)
    if fragment is None or "@" in unit_name:  # template aliases are not followed
        return []
    found: list[str] = []
    for base in UNIT_PATHS:
        for n in links(base):
            if not n.endswith(f".{kind}") or n == unit_name or n in found:
                continue
            target = canonical(f"{base}/{n}")
            if target is None:
                continue
            where, _, tname = target.rpartition("/")
            if target == fragment or (tname == unit_name and where in UNIT_PATHS):
                found.append(n)
    return found


def conf_files(dirs: list[str], list_dir: ListDir, suffix: str = ".conf") -> list[str]:
    """conf_files_list_strv(): every ``*.conf`` (not hidden) in the directories; a file name in
    an earlier directory masks the same name in later ones; sorted by file name."""
    chosen: dict[str, str] = {}
    for d in dirs:
        for fname in list_dir(d):
            if fname.endswith(suffix) and not fname.startswith(".") and fname not in chosen:
                chosen[fname] = f"{d}/{fname}"
    return [chosen[f] for f in sorted(chosen, key=lambda s: s.encode())]


def drop_in_files(unit_name: str, list_dir: ListDir,
                  aliases: list[str] | tuple[str, ...] = ()) -> list[str]:
    return conf_files(drop_in_dirs(unit_name, aliases), list_dir)


def fragment(unit_name: str, list_dir: ListDir) -> str | None:
    """The unit file systemd loads for a name: the first lookup path holding the name, else
    (for an instance) the first holding its template."""
    prefix, kind, instance = _split(unit_name)
    for name in [unit_name] + ([f"{prefix}@.{kind}"] if instance else []):
        for base in UNIT_PATHS:
            if name in list_dir(base):
                return f"{base}/{name}"
    return None


def system_conf_files(list_dir: ListDir) -> list[str]:
    """/etc/systemd/system.conf, then system.conf.d/*.conf across the configuration
    directories (the manager's parse of its own configuration)."""
    main = ["/etc/systemd/system.conf"] if "system.conf" in list_dir("/etc/systemd") else []
    return main + conf_files([f"{d}/systemd/system.conf.d" for d in CONF_PATHS], list_dir)


_GLOB_CHARS = re.compile(r"[*?\[]")


class GlobError(ValueError):
    """A wildcard agentkit does not expand as glob(3) would."""


def expand_env_glob(pattern: str, list_dir: ListDir) -> list[str]:
    """An EnvironmentFile= path with wildcards, as glob(3) expands it (sorted; ``*`` and ``?``
    do not match a leading dot). Wildcards are expanded in the last path component only."""
    head, _, last = pattern.rpartition("/")
    if not _GLOB_CHARS.search(pattern):
        return [pattern]
    if _GLOB_CHARS.search(head) or "\\" in last or "[^" in last:
        raise GlobError(f"wildcards in {pattern!r} beyond the file name (or escaped)")
    names = [n for n in list_dir(head or "/")
             if fnmatch.fnmatchcase(n, last) and (last.startswith(".") or
                                                   not n.startswith("."))]
    return [f"{head}/{n}" for n in sorted(names, key=lambda s: s.encode())]
