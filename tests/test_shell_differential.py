"""The start-script reader against bash itself, on generated scripts (tests/shellgen.py).

Each case is run by real bash (inside bubblewrap where it works, with a clean ``env -i``
environment either way), with the engine replaced by a program that dumps its environment
and arguments; once per run-time "world" (flags present or not, value files empty or not).
Then the static reading must agree:

- a NCCL_*/CUDA_* variable that bash gives the engine the same way in every world: agentkit
  has that value (or its absence), never "not established";
- one that differs between worlds: agentkit says not established (with file and line);
- the engine's arguments likewise; a case whose bash never starts the engine: no launch.

Deliberate limits, each answered as "not established" rather than guessed (and so the
generator only produces them where run time really decides): every ``$(…)`` and backquote
(even a deterministic one) but ``$(grep … FILE | xargs)`` (tests/test_shell_subst.py),
every ``[ … ]``/``test`` condition (even on values the script set) except a file test the
host's files decide (``[ -f F ] && . F``: the reading is given the same files bash has, see
``_read``), loops other than ``for`` over known words,
``read``, ``case`` on any word (a ``*`` arm: some arm runs), and after code the reading
cannot follow (``eval`` of computed text, ``source`` of an unreadable file: "wild") every name
not set again afterwards. A launch under a condition leaves the command
line and the whole environment not established.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from agentkit._hostmodel._engines import engine_of
from agentkit._hostmodel._shell import Var, Where
from agentkit._hostmodel._shexec import Reading
from agentkit._hostmodel._wrapper import read_command
from tests.shellgen import Case, generate

CASES = int(os.environ.get("SHELL_CASES", "1000"))  # more: a longer hunt
WATCH = ("NCCL_", "CUDA_")
# the engine: its environment as the kernel gave it, and its arguments (dash starts fastest)
DUMP = """#!/bin/sh
/bin/cat /proc/$$/environ > out.env
printf '%s\\0' "$#" "$@" > out.argv
"""
JOBS = 4  # drivers run side by side


def _is_engine(argv: list[str]) -> bool:
    return engine_of(argv) is not None


def _world_dirs(seed: int, tmp: str, engine: str) -> list[tuple[Case, Path]]:
    """The case once per world, each in its own directory with its run-time files: the
    generator is deterministic, so every copy is the same script under another root."""
    first = generate(seed, f"{tmp}/c{seed}w0", engine)
    out = []
    for i, (flags, values) in enumerate(first.worlds()):
        case = generate(seed, f"{tmp}/c{seed}w{i}", engine)
        root = Path(case.root)
        (root / "rt").mkdir(parents=True)
        for path, text in case.files.items():
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text)
            os.chmod(path, 0o755)
        for f in flags:
            (root / "rt" / f).touch()
        for name, text in values.items():
            (root / "rt" / name).write_text(text)
        out.append((case, root))
    return out


def _driver(worlds: list[tuple[Case, Path]]) -> str:
    lines = ["#!/bin/bash"]
    for case, root in worlds:
        env = " ".join(shlex.quote(f"{k}={v}") for k, v in case.env.items())
        argv = " ".join(shlex.quote(a) for a in case.argv)
        lines.append(f"(ulimit -t 10; cd {shlex.quote(str(root))} && exec env -i {env} {argv})"
                     " </dev/null >/dev/null 2>&1")
    return "\n".join(lines) + "\nexit 0\n"


def _run_bash(tmp: str, worlds: list[tuple[Case, Path]]) -> None:
    drivers = []
    for i in range(JOBS):
        drivers.append(Path(tmp, f"driver{i}.sh"))
        drivers[-1].write_text(_driver(worlds[i::JOBS]))
    Path(tmp, "all.sh").write_text("".join(f"/bin/bash {d} &\n" for d in drivers) + "wait\n")
    argv = ["/bin/bash", f"{tmp}/all.sh"]
    bwrap = shutil.which("bwrap")
    if bwrap and subprocess.run([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "true"],
                                capture_output=True).returncode == 0:
        # the project's kernel sandbox: read-only host, no network, only the temp dir writable
        argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--bind", tmp, tmp, "--unshare-all", "--die-with-parent", "--clearenv",
                "--setenv", "PATH", "/usr/bin:/bin", *argv]
    subprocess.run(argv, check=True, capture_output=True, timeout=600)


def _world(root: Path) -> tuple[dict[str, str], list[str]] | None:
    p = root / "out.argv"
    if not p.exists():
        return None
    words = p.read_bytes().decode().split("\0")[:-1]
    args = words[1 : 1 + int(words[0])]
    env = dict(e.split("=", 1) for e in (root / "out.env").read_bytes().decode()
               .split("\0") if "=" in e)
    return {k: v for k, v in env.items() if k.startswith(WATCH)}, args


def _read(case: Case) -> Reading:
    """The reading as the host model makes it (_command.follow_command): the files it asks
    for are read and it reads again. It sees the case's files (scripts, sourced and host
    files, the same in every world); a run-time flag it cannot read (None: missing, refused,
    it cannot tell which), so a test on it stays not established, as bash's worlds differ."""
    files: dict[str, str | None] = dict(case.files)
    while True:
        reading = read_command(case.argv, case.env, files, _is_engine, Where("unit", 1))
        new = [p for p in reading.wanted if p not in files]
        if not new:
            return reading
        files.update({p: None for p in new})


def _compare(case: Case, roots: list[Path], reading: Reading, engine: str) -> list[str]:
    worlds = [_world(root) for root in roots]
    launch = reading.launch
    if all(w is None for w in worlds):  # agentkit may say only that it is not sure
        ok = launch is None or not launch.env_known or (case.wild and launch.wild is not None)
        return [] if ok else [f"bash never starts the engine; agentkit: {launch}"]
    if launch is None:
        return ["bash starts the engine; agentkit finds no launch "
                f"({reading.problems}, wanted {reading.wanted})"]
    started = [w is not None for w in worlds]
    if not launch.env_known:  # "the engine starts only under a condition"
        ok = launch.argv is None and (case.engine_conditional or not all(started)
                                      or (case.wild and launch.wild is not None))
        return [] if ok else [f"agentkit: launch conditional; bash: {started}"]
    # where bash stops before the engine (set -e, set -u), the engine never runs: what
    # agentkit says about the engine must hold where it does
    seen = [w for w in worlds if w is not None]
    out = []
    args = {tuple(a) for _, a in seen}
    if len(args) > 1:
        if launch.argv is not None:
            out.append(f"argv differs between worlds {args}; agentkit says {launch.argv}")
    elif launch.argv is None:
        if not (case.wild and launch.wild) and all(started):
            out.append(f"argv {args} is the same in every world; agentkit: not established "
                       f"({launch.why})")
    elif (launch.argv[0], launch.argv[1:]) != (engine, list(next(iter(args)))):
        out.append(f"argv: bash {next(iter(args))}, agentkit {launch.argv}")
    names = {k for e, _ in seen for k in e} | {k for k in launch.env if k.startswith(WATCH)}
    for name in sorted(names):
        got = {e.get(name) for e, _ in seen}
        var = launch.env.get(name)
        if var is None and launch.wild is not None:  # any name may have changed there
            var = Var(None, known=False, xknown=False, why=launch.wild_why, at=launch.wild)
        if len(got) > 1:
            if var is None or var.settled:
                out.append(f"{name} differs between worlds {got}; agentkit: "
                           f"{var.value if var else 'absent'}")
        elif var is not None and not var.settled:
            if not (case.wild and launch.wild):
                out.append(f"{name}={got} in every world; agentkit: not established ({var.why}"
                           f", {var.at})")
        elif (var.value if var else None) != next(iter(got)):
            out.append(f"{name}: bash {next(iter(got))!r}, agentkit "
                       f"{var.value if var else None!r}")
    return out


@pytest.mark.timeout(600)  # bash runs ~4,000 scripts; a loaded machine is slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_start_scripts_agree_with_bash() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        engine = f"{tmp}/bin/vllm"
        Path(engine).parent.mkdir()
        Path(engine).write_text(DUMP)
        os.chmod(engine, 0o755)
        per_case = [_world_dirs(seed, tmp, engine) for seed in range(CASES)]
        _run_bash(tmp, [w for ws in per_case for w in ws])
        bad = []
        for seed, worlds in enumerate(per_case):
            case = worlds[0][0]
            reading = _read(case)
            for problem in _compare(case, [r for _, r in worlds], reading, engine):
                bad.append(f"seed {seed}: {problem}")
        shown = "\n".join(bad[:15])
        assert not bad, f"{len(bad)} disagreements with bash in {CASES} cases:\n{shown}"
