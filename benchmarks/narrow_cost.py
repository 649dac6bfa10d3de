"""What the narrow tools of issue 28 cost against what they replaced, in the same run. The
ratio is the figure; absolute times depend on the machine.

    python -m benchmarks.narrow_cost [--reps 15] [--commits 200]

* git: the narrow reader (a private copy of .git, dulwich, per-file redaction before the
  diff) against git itself as the sandbox used to run it (the real binary with the forced
  ``-c`` safety settings and environment, after walking .git to vet it), for ``log --oneline``,
  ``log -p -n 20`` and ``show HEAD:FILE`` in a repository of ``--commits`` commits.
* decoding: ``to_text`` (encoding found, escapes and NULs taken out) against the UTF-8 decode
  it replaced, on 1 MiB of program output.
* journal --grep: the pattern matched in-process on redacted lines against no filtering
  (journalctl's own --grep cost is journalctl's; what is added here is the match).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agentkit._sandbox._commands import _grepped
from agentkit._sandbox._gitread import read_git
from agentkit._sandbox._paths import Root
from agentkit._sandbox._redact import redact
from agentkit._sandbox._redact._decode import to_text

# the settings the sandbox forced on git before issue 28 (see git history of _git.py)
_OLD_FORCED = ["core.fsmonitor=false", "core.pager=cat", "core.hooksPath=/dev/null",
               "diff.external=", "credential.helper=", "color.ui=never", "mailmap.file="]
_ENV = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat", "HOME": "/nonexistent"}


def _repo(base: Path, commits: int) -> Path:
    repo = base / "repo"
    repo.mkdir()
    env = {**os.environ, **_ENV}

    def git(*a: str) -> None:
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *a], cwd=repo,
                       env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    for i in range(commits):
        (repo / "deploy.env").write_text(f"NCCL_ALGO=Ring\nREPLICAS={i}\nHF_TOKEN=hf_{i:034d}\n")
        (repo / "values.yaml").write_text("".join(f"k{j}: {i * j}\n" for j in range(40)))
        git("add", "-A")
        git("commit", "-q", "-m", f"change {i}")
    return repo


def _old_git(repo: Path, args: list[str]) -> str:
    for _ in os.walk(repo / ".git"):  # the vetting walk over .git
        pass
    forced = [x for kv in _OLD_FORCED for x in ("-c", kv)]
    env = {**_ENV, "GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)}
    out = subprocess.run(["git", "--no-pager", *forced, *args], env=env, capture_output=True,
                         check=True).stdout
    return redact(out.decode("utf-8", "replace"))


def _median(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--commits", type=int, default=200)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = _repo(Path(tmp), opts.commits)
        root = Root("/", allow=(tmp,))
        print(f"git, repository of {opts.commits} commits (median of {opts.reps}):")
        for args in (["log", "--oneline"], ["log", "-p", "-n", "20"],
                     ["show", "HEAD:values.yaml"]):
            new = _median(lambda a=args: read_git(root, ["-C", str(repo), *a], 1 << 18),
                          opts.reps)
            old = _median(lambda a=args: _old_git(repo, a), opts.reps)
            print(f"  git {' '.join(args):24} narrow {new * 1000:7.1f} ms   git {old * 1000:7.1f}"
                  f" ms   ratio {new / old:5.2f}")
    blob = ("NCCL_DEBUG=INFO step 1 ok \x1b[32mgreen\x1b[0m\n" * 25_000).encode()
    new = _median(lambda: to_text(blob), opts.reps)
    old = _median(lambda: blob.decode("utf-8", "replace"), opts.reps)
    print(f"decode 1 MiB of output: to_text {new * 1000:.1f} ms, utf-8 decode {old * 1000:.2f} ms"
          f" (+{(new - old) * 1000:.1f} ms)")
    text = redact("".join(f"Nov 20 10:00:{i % 60:02d} h vllm[1]: step {i} ok\n"
                          for i in range(20_000)))
    new = _median(lambda: _grepped("step 19", text), opts.reps)
    print(f"journal --grep in-process over 20k redacted lines: {new * 1000:.1f} ms")


if __name__ == "__main__":
    main()
