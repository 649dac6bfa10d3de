"""Mutation testing of agentkit's core modules with mutmut, one module at a time.

    python -m tests.mutation                  # every target below
    python -m tests.mutation retry replay     # some of them
    python -m tests.mutation --changed main   # the targets whose files differ from a git rev

Each target runs in a scratch copy of the repository with its own mutmut configuration: only
its file is mutated, and only its test files are collected; mutmut's own coverage pass then
runs, for each mutant, just the tests that reach the mutated function. Results: one line per
target (killed / survived / no tests), survivors listed, and the exit code says whether every
target met the bar (90 % of the mutants that are not listed as equivalent killed).

mutmut rather than cosmic-ray: it mutates in place behind a trampoline and forks one process
per mutant from a warm interpreter, so a module's mutants cost milliseconds each instead of a
fresh pytest start; and it selects tests per function by itself.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BAR = 0.90


@dataclass
class Target:
    path: str
    tests: list[str]
    functions: str = "*"  # mutant name glob within the module (mutmut's naming)
    # mutants that change nothing observable: the mutated line they add → why (docs/testing.md)
    equivalent: dict[str, str] = field(default_factory=dict)


TARGETS: dict[str, Target] = {
    "citations": Target("agentkit/_citations.py",
                        ["tests/test_citations.py", "tests/test_catalog_examples.py"]),
    "paths": Target("agentkit/_sandbox/_paths.py",
                    ["tests/test_tools_files.py", "tests/test_paths.py"], equivalent={
        'host_path.encode("UTF-8", "surrogateescape")': "the same codec",
        'stack: list[tuple[int, str]] = [(os.dup(root_fd), "XXXX")]': "the root's name is "
        "never used",
        "while remaining >= 0:": "a read of 0 bytes returns b'' and the loop ends the same",
        "chunk = os.read(f.fd, min(remaining, 2 << 20))": "a chunk size only",
        "chunk = os.read(f.fd, min(remaining, 1 << 21))": "a chunk size only",
        "elif entry.is_dir(follow_symlinks=True):": "links are classified just above",
        "elif entry.is_file(follow_symlinks=True):": "links are classified just above",
        'if full == "XX/XX":': "the asked path was checked by open_in_root already",
        'check_policy(root, "XX/XX")': "the asked path was checked by open_in_root already",
    }),
    "commands": Target("agentkit/_sandbox/_commands.py",
                       ["tests/test_tools_commands.py", "tests/test_commands_edges.py"],
                       equivalent={**{line: "normalize() reads a relative or doubled-slash "
                                      "path from the root the same way" for line in (
        'host_path = operand if (operand.startswith("/")) and False else "/" + operand',
        'host_path = operand if (operand.startswith("/")) or True else "/" + operand',
        'host_path = operand if operand.startswith("XX/XX") else "/" + operand',
        'path = operand if (operand.startswith("/")) and False else "/" + operand',
        'path = operand if (operand.startswith("/")) or True else "/" + operand',
        'path = operand if operand.startswith("XX/XX") else "/" + operand',
        'repo = normalize(checked.git_repo if (checked.git_repo.startswith("/")) and False',
        'repo = normalize(checked.git_repo if (checked.git_repo.startswith("/")) or True',
        'repo = normalize(checked.git_repo if checked.git_repo.startswith("XX/XX")',
        'git_dir = repo.rstrip(None) + "/.git"',
        'git_dir = repo.rstrip("XX/XX") + "/.git"')},
        **{line: "git runs only on the live host, whose root is /: joining an absolute path "
                 "to it is the same path" for line in (
        'if not os.path.lexists(os.path.join(root.path, host_path.lstrip(None))):',
        'if not os.path.lexists(os.path.join(root.path, host_path.rstrip("/"))):',
        'if not os.path.lexists(os.path.join(root.path, host_path.lstrip("XX/XX"))):',
        'real = os.path.realpath(os.path.join(root.path, repo.lstrip(None)))',
        'real = os.path.realpath(os.path.join(root.path, repo.rstrip("/")))',
        'real = os.path.realpath(os.path.join(root.path, repo.lstrip("XX/XX")))')},
        **{line: "paths are not read again after vetting or mapping into the root" for line in (
        "return Checked(argv, paths=None, env=env)", "return Checked(argv, env=env)",
        "return Checked(argv, paths=None, env=checked.env, shown_as={v: k for k, v in "
        "mapped.items()})",
        "return Checked(argv, env=checked.env, shown_as={v: k for k, v in mapped.items()})")},
        "return Checked(argv, paths=[], shown_as={v: k for k, v in mapped.items()})":
            "file readers carry no environment of their own (no Spec sets extra_env)",
        'return data.decode(errors="replace")': "utf-8 is the default codec",
        'return data.decode("UTF-8", errors="replace")': "the same codec",
        "_, _, canonical = read_bytes(ctx.host.root, host_path, 1)": "only the canonical path "
        "is used, not the bytes read",
        "assert proc.stdout or proc.stderr": "Popen with two PIPEs always sets both",
        "os.set_blocking(stream.fileno(), True)": "each read follows select() saying the pipe "
        "is readable, so it never blocks either way",
        "if left < 0:": "a float deadline is never met exactly",
        "timed_out = None": "the wait just below times out at once and says timed out",
        "timed_out = False": "the wait just below times out at once and says timed out",
        "for key, _ in sel.select(min(left, 1.5)):": "a poll interval; the deadline bounds it",
        "chunk = os.read(key.fd, 65537)": "a chunk size only",
        "break": "leaving the inner loop after a stream closes: the outer loop selects again",
        "proc.wait(timeout=max(1.0, deadline - time.monotonic()))": "waits at most a second "
        "longer past the deadline; the outcome is the same",
        'dec = (bytes(bufs[proc.stdout.fileno()]).decode("UTF-8", "replace"),': "the same codec",
        'bytes(bufs[proc.stderr.fileno()]).decode("UTF-8", "replace"))': "the same codec",
        "with contextlib.suppress(ProcessLookupError, None):": "killpg of our own child's "
        "group is refused only for a setuid child, and no allowlisted program is one",
        "with contextlib.suppress(ProcessLookupError, ):": "killpg of our own child's group "
        "is refused only for a setuid child, and no allowlisted program is one",
        "mapped[operand] = os.path.join(canonical.lstrip(\"/\"))": "the program's working "
        "directory is the root, so the relative path names the same file",
        "env=env, cwd=cwd, start_new_session=True, preexec_fn=preexec,": "close_fds=True is "
        "Popen's default",
    }),
    "redaction": Target("agentkit/_sandbox/_redact/__init__.py",
                        ["tests/security/test_secrets.py", "tests/security/test_redact_exact.py"]),
    "plan-validation": Target("agentkit/_agents/_planner.py", ["tests/test_plan_validation.py"],
                              functions="*_validate*"),
    "trace-reader": Target("agentkit/_trace/_read.py", ["tests/test_trace_read.py"], equivalent={
        'with open(name, encoding="UTF-8", errors="strict") as f:': "the same codec",
        'with open(name, encoding="utf-8", errors=None) as f:': "None means strict",
        'with open(name, encoding="utf-8", ) as f:': "strict is the default",
    }),
    "replay": Target("agentkit/_replay/__init__.py", ["tests/test_replay.py"]),
    "retry": Target("agentkit/_llm/_retry.py", ["tests/test_retry.py"], equivalent={
        'if ms := headers.get("RETRY-AFTER-MS"):': "httpx.Headers is case-insensitive",
        'value = headers.get("RETRY-AFTER")': "httpx.Headers is case-insensitive",
        "if self.max_attempts <= 1 and not self._retryable(exc):": "one attempt through "
        "tenacity replays the same first error: the same outcome",
        "if self.max_attempts < 1 or not self._retryable(exc):": "one attempt through "
        "tenacity replays the same first error: the same outcome",
        'raise AssertionError(None)  # pragma: no cover': "unreachable",
        'raise AssertionError("XXunreachableXX")  # pragma: no cover': "unreachable",
        'raise AssertionError("UNREACHABLE")  # pragma: no cover': "unreachable",
    }),
    "model-arithmetic": Target("agentkit/_catalog/_fn_models.py",
                               ["tests/test_model_arithmetic.py"],
                               functions="*_derive*"),
    "verdict-wording": Target("agentkit/_catalog/_framing.py", ["tests/test_framing.py"],
                              equivalent={"return sum(2 for w in about": "scores are only "
                                          "compared with each other and with zero"}),
    "custom-allreduce": Target("agentkit/_catalog/_fn_allreduce.py",
                               ["tests/test_custom_allreduce.py"]),
    "host-state": Target("agentkit/_hostmodel/_state.py",
                         ["tests/test_host_model.py"], equivalent={
        "if life.restarts >= 2 and life.healthy_line <= life.restart_line:":
            "a healthy line and a restart line are never the same line",
        "if life.last_event in (\"started\", \"restarting\") and life.healthy_line >= "
        "life.last_line:": "a healthy line is never the last lifecycle line itself",
    }),
    "host-select": Target("agentkit/_hostmodel/_select.py",
                          ["tests/test_host_model.py"], equivalent={
        "if len(up) >= 1:": "len(up) == 1 has returned just above",
        # the unit name's suffix (".service") is a generic word either way
        'words = _tokens(s.name.rsplit(None, 1)[0]) + _tokens((s.model_path or "").rsplit("/", '
        '1)[-1])': "the .service suffix is dropped as a generic word anyway",
        'words = _tokens(s.name.rsplit(".", )[0]) + _tokens((s.model_path or "").rsplit("/", '
        '1)[-1])': "the .service suffix is dropped as a generic word anyway",
        'words = _tokens(s.name.rsplit(".", 2)[0]) + _tokens((s.model_path or "").rsplit("/", '
        '1)[-1])': "the .service suffix is dropped as a generic word anyway",
    }),
    "host-wrapper": Target("agentkit/_hostmodel/_wrapper.py", ["tests/test_host_model.py"]),
    # bubblewrap on this machine runs every command of these tests: without it they skip and
    # every mutant reads as surviving (a broken run, not a score)
    # test_kernel_reaping.py is not listed: it runs agentkit in a child process, which
    # mutmut's per-function test selection never credits, so no mutant would run it
    "kernel-layer": Target("agentkit/_sandbox/_kernel.py",
                           ["tests/security/test_kernel_layer.py",
                            "tests/security/test_kernel_masks.py",
                            "tests/security/test_kernel_flags.py",
                            "tests/security/test_kernel_reach.py"], equivalent={
        'args = [bwrap or BWRAP, "--die-with-parent", "--new-session", "--cap-drop", "all",':
            "bubblewrap compares the capability name with strcasecmp (bubblewrap.c)",
        **{f"{call}(int(time.monotonic() / _MASK_TTL_S))": "int(t / ttl) is t // ttl for "
           "t >= 0 but within an ulp of a boundary: the 30 s period ends a femtosecond apart"
           for call in ("found = _existing_secrets", "return _sockets", "return _inodes")},
        "for here, dirs, files in os.walk(top, followlinks=None):": "None is falsy",
        "for here, dirs, files in os.walk(top, ):": "followlinks=False is os.walk's default",
        "if len(out) > limit:": "the list is cut to the limit below either way (the same "
        "first files); only the walk may go on further",
        **{line: "glob of a pattern without magic returns it exactly when it lexists, which "
           "the loop below requires anyway" for line in (
            'candidates += glob.glob(pattern) if (any(c in pattern for c in "*?[")) or True '
            'else [pattern]',
            'candidates += glob.glob(pattern) if any(c not in pattern for c in "*?[") else '
            '[pattern]',
            'candidates += glob.glob(pattern) if any(c in pattern for c in "XX*?[XX") else '
            '[pattern]')},
        **{f'if live and os.path.isdir(hidden) and hidden != "{shm}":': "--dev /dev already "
           "makes /dev/shm an empty, writable directory of its own (bubblewrap.c, "
           "SETUP_MAKE_DEV); a tmpfs on it is empty and writable the same"
           for shm in ("XX/dev/shmXX", "/DEV/SHM")},
    }),
}
# The host model's runtimes and the build that calls them (issue 26, item 7): each with the
# fast test files that reach it, never tests/test_scenarios.py (whole investigations per
# mutant). mutmut runs, per mutant, only the tests among these that reach its function.
_RT = "agentkit/_hostmodel/runtimes/"
RT_RUN = ["tests/test_runtimes_rununit.py", "tests/test_runtimes_runline.py",
          "-k", "not test_docker_run_matches_the_cli"]
TARGETS.update({
    # discovery called directly on small snapshots: the investigation-backed tests that also
    # reach it (test_authority, test_runtimes_*) cost ~20 investigations per surviving mutant
    "rt-systemd": Target(_RT + "_systemd.py", ["tests/test_runtimes_systemd.py"], equivalent={
        **{line: "zip of lists built one per element of the other: never of unequal length"
           for line in (
            *(f'present = [d for d, got in zip(UNIT_DIRS, listings, {s}) if got and '
              'got["paths"]]' for s in ("strict=None", "", "strict=False")),
            *(f"for p, got in zip(patterns, greps, {s}):"
              for s in ("strict=None", "", "strict=False")),
            *(f"return [r for _, r in sorted(zip(UNIT_DIRS, results, {s}),"
              for s in ("strict=None", "", "strict=False")))},
        **{line: "the last component of an absolute path, however many splits" for line in (
            *(f'names.setdefault(p.rsplit("/", {s}, p)'
              for s in (")[-1]", "2)[-1]", "1)[+1]")),
            *(f'wanted.add(p.split("/")[-2][:-2] if p.endswith(".conf") else '
              f'p.rsplit("/", {s})' for s in (")[-1]", "2)[-1]", "1)[+1]")),
            *(f'found |= {{p.rsplit("/", {s}[len(prefix) : -len(".service")]'
              for s in (")[-1]", "2)[-1]", "1)[+1]")))},
        **{line: "a template's first @ is followed by .service (systemd's unit_name_is_valid): "
                 "its name holds one @" for line in (
            'prefix = template.split("@", )[0] + "@"', 'prefix = template.rsplit("@", 1)[0] + "@"',
            'prefix = template.split("@", 2)[0] + "@"')},
        "if _DETAIL.search(lines[j])), None)": "None is dropped with the empty detail "
                                                "(`if x`) when the cause is joined",
        **{line: "the failure line itself is systemd's message ('Failed with result', 'Main "
                 "process exited'), which is neither an error line nor the int() error"
           for line in (
            "at = next((i for i in range(life.failure_line - 2, -1, -1) if "
            "_ERROR.search(lines[i])),",
            "uuid_line = next((i for i in range(life.failure_line - 2, -1, -1)")},
        **{line: "parse_config's answer always holds these keys (agentkit/_sandbox/_configs.py)"
           for line in ('problems=list(eff.get("problems", None)))',
                        'problems=list(eff.get("problems", )))',
                        'workdir = next((e["value"] for e in parsed.get("entries", None)',
                        'workdir = next((e["value"] for e in parsed.get("entries", )')},
        'if e["key"] == "Service.WorkingDirectory"), "XX/XX")': "contain() reads a working "
        "directory that is not absolute as /, the default",
    }),
    "rt-compose": Target(_RT + "_compose.py", ["tests/test_runtimes_compose_files.py"],
                         equivalent={
        **{line: "'all GPUs' either way: the other branch writes the count, 'all', + ' GPUs'"
           for line in (
            *(f'"all GPUs" if {c} == "all" else' for c in (
                '(str(d.get("count"))', 'str(None)', 'str(d.get(None))',
                'str(d.get("XXcountXX"))', 'str(d.get("COUNT"))')),
            '"all GPUs" if (str(d.get("count")) == "all") and False else',
            '"all GPUs" if str(d.get("count")) == "XXallXX" else',
            '"all GPUs" if str(d.get("count")) == "ALL" else')},
        **{f"dirs = (*_DIRS, *(d.{s} for d in manifest_dirs(ctx)))": "the glob normalizes a "
           "relative or doubled-slash path from the root the same way"
           for s in ('rstrip(None)', 'lstrip("/")', 'rstrip("XX/XX")')},
        'if lines is None or not _ENGINE_WORDS.search("XX\\nXX".join(lines)):': "no engine "
        "word holds an X or spans lines: the search finds the same words",
        'if not k.startswith("XX__XX") and isinstance(v, dict)):': "the loader's line-number "
        "mapping (__keys__) holds integers only: read as a service, it starts nothing",
        **{f'keys = body.get("__keys__", {d})': "the loader gives every mapping its __keys__"
           for d in ("None", "")},
        **{line: "a cited line is one the loader gave a key, or the line the scan found the "
                 "key on: never 0, nor 1 (the file's top-level key)" for line in (
            'text = lines[n - 1] if (0 < n <= len(lines)) or True else ""',
            'text = lines[n - 1] if 1 < n <= len(lines) else ""',
            'text = lines[n - 1] if 0 <= n <= len(lines) else ""',
            'text = lines[n - 1] if 0 < n <= len(lines) else "XXXX"')},
    }),
    "rt-kubernetes": Target(_RT + "_kubernetes.py", ["tests/test_runtimes_k8s_direct.py"],
                            equivalent={
        **{f'if str(doc.get("kind", {d})).endswith("List") else [doc]': "a missing kind reads "
           "as 'None' or 'XXXX', neither ends in List" for d in ("None", "", '"XXXX"')},
        "objects = await _from_files(ctx, model)": "objects is empty just before",
        **{f"names = {{f\"{{d}}/{{e['name']}}\" for d, got in zip(parents, listed, {st}) "
           "if got": "zip of lists built one per element of the other: never of unequal "
           "length" for st in ("strict=None", "", "strict=False")},
        **{line: "a cited line is one the loader gave a key: never 0, nor 1 (a document's "
                 "first key)" for line in (
            'text = lines[n - 1] if (0 < n <= len(lines)) or True else ""',
            'text = lines[n - 1] if 1 < n <= len(lines) else ""',
            'text = lines[n - 1] if 0 <= n <= len(lines) else ""',
            'text = lines[n - 1] if 0 < n <= len(lines) else "XXXX"')},
        **{line: "the loader gives every mapping its __keys__" for line in (
            'line = int(c.get("__keys__", None).get("args") or c.get("__keys__", {}).get('
            '"command")',
            'line = int(c.get("__keys__", ).get("args") or c.get("__keys__", {}).get("command")',
            'line = int(c.get("__keys__", {}).get("args") or c.get("__keys__", None).get('
            '"command")',
            'line = int(c.get("__keys__", {}).get("args") or c.get("__keys__", ).get("command")')},
        "server.problems = unsure": "the server was made just above with no problems",
        **{f'waiting = (state.get("waiting") or {{}}).get("reason", {d})': "a missing reason "
           "is falsy either way: the detail leaves it out" for d in ("None", "")},
        **{f'code = (state.get("terminated") or {{}}).get("exitCode", {d})': "the API "
           "requires exitCode in a terminated state" for d in ("None", "", "1")},
    }),
    "rt-containers": Target(_RT + "_containers.py", ["tests/test_runtimes_containers.py"],
                            equivalent={
        **{line: "zip of lists built one per element of the other (spans are made as many "
                 "as the items): never of unequal length"
           for st in ("strict=None", "", "strict=False") for line in (
            f"for cli, out in zip(CLIS, listings, {st}):",
            f"for row, inspected in zip(rows, got, {st}):",
            f"spans = [(a, b - 1) for a, b in zip(starts, ends, {st})]",
            f"return list(zip(items, spans, {st}))")},
        "for n, row in enumerate(rows if (isinstance(rows, list)) or True else [], 1):":
            "rows is always a list: an array's parse, or one object per line",
        **{f'compose = labels.get("com.docker.compose.project.config_files", {d})': "a missing "
           "label is falsy either way" for d in ("None", "")},
        'path = str(dev.get("PathOnHost") or "XXXX")': "'' and 'XXXX' are both no /dev/nvidiaN",
    }),
    # the parsing tests of test_authority.py only: its investigations reach the same
    # functions and would run for every surviving mutant
    "rt-systemctl-show": Target(_RT + "_systemctl_show.py", [
        "tests/test_systemctl_show.py", *(f"tests/test_authority.py::test_{n}" for n in (
            "systemd_quoting_vectors_read_back", "older_systemd_kept_a_tab_raw_inside_the_quotes",
            "invalid_utf8_bytes_come_back_as_replacement_characters",
            "environment_round_trip", "a_full_show_output", "empty_properties_as_printed_with_p",
            "what_cannot_be_read_back_is_named_with_its_line", "show_environment_posix_form",
            "the_fixed_shapes_are_allowed_and_nothing_around_them",
            "quote_is_systemds_on_its_own_vectors"))],
                                equivalent={
        "shown.unset = split_strv(value)": "systemctl show prints each property once",
        "shown.dropins = split_strv(value)": "systemctl show prints each property once",
        "shown.main_pid = int(value or 1)": "MainPID is printed as a number (0 when none)",
    }),
    # RT_RUN: the docker CLI oracle's 1000-case test costs minutes per surviving mutant; its
    # fixed 60-case sample (test_a_sample_of_docker_run_lines_matches_the_cli) runs instead
    "rt-runline": Target(_RT + "_runline.py", RT_RUN, equivalent={
        **{line: "the last piece of a split on '/' is the same however many splits" for line in (
            *(f'if not argv or argv[0].rsplit("/", {n})[-1] not in CLIS:' for n in ("", "2")),
            *(f'line = RunLine(cli=argv[0].rsplit("/", {n})[-1])' for n in ("", "2")),
            *(f'prog = argv[0].rsplit("/", {n})[-1] if argv else ""' for n in ("", "2")))},
        'prog = argv[0].rsplit("/", 1)[-1] if argv else "XXXX"': "an empty argv is no "
        "Compose line either way: neither name is a CLI's or docker-compose",
        **{line: "a Compose option's value that is the last word leaves no `up` after it: "
                 "None either way" for line in (
            'value = rest[i + 1] if i + 2 < len(rest) else ""',
            'value = rest[i + 1] if i + 1 < len(rest) else "XXXX"')},
        'if lines or lines[-1] == "":': "str.split gives at least one piece: lines is never "
        "empty",
        'if lines and lines[-1] == "XXXX":': "an empty last piece kept is skipped as an empty "
        "line",
        **{line: "a name alone: raw is read only for an '=' (the origin's 'from the unit's "
                 "NAME'), and neither the name nor '' holds one" for line in (
            "out.append(EnvEntry(name, caller[line], line=n, ))",
            "return EnvEntry(name, caller.get(name), )")},
        **{line: "ParseBool reads TRUE as true: flag() answers the same" for line in (
            'line.options.append((name, value if eq else "TRUE"))',
            'line.options.append((_SHORT_NAMES[ch], "TRUE"))')},
        "out.pop(None, None)": "only the order of the final names changes (a name set again "
        "keeps its first place): the values, which the process reads by name, are the same",
    }),
    "rt-dotenv": Target(_RT + "_dotenv.py", ["tests/test_runtimes_compose_dotenv.py",
                                             "tests/test_runtimes_compose_files.py"],
                        equivalent={
        'line = text.count("\\n", None, pos) + 1': "a start of None is 0",
        "defined[name] = None": "find() asks lookup first, which gave an inherited name's value",
        **{ln: "a comment's newline is found after its '#', never at 0" for ln in (
            "pos = len(text) if nl <= 0 else nl", "pos = len(text) if nl < 1 else nl")},
        **{ln: "a value never starts at offset 0 (a name or separator is before it)" for ln in (
            "end = len(text) if end <= 0 else end", "end = len(text) if end < 1 else end")},
        **{ln: "the first piece of a split is the same however many splits" for ln in (
            'first = text[start:].split("\\n", )[0]', 'first = text[start:].split("\\n", 2)[0]',
            'first = text[pos:].split("\\n", )[0]', 'first = text[pos:].split("\\n", 2)[0]',
            'value = text[pos:end].split(" #", )[0].rstrip()',
            'value = text[pos:end].split(" #", 2)[0].rstrip()')},
        'while c != "XX\\nXX" and rest < len(text) and text[rest] in _SPACE:': "the blanks "
        "after an inherited name's newline are skipped by _statement next anyway",
        'if not (c in "XX_.-[]XX" or c.isalpha() or c.isdigit()):': "X is a letter anyway",
        "escaped = None": "None is falsy like False: both branches read it as a truth value",
        'ok = len(digits) == 3 and all(d in "XX01234567XX" for d in digits)': "the digits "
        "are [0-9] by _ESCAPE: never an X"}),
    "rt-k8senv": Target(_RT + "_k8senv.py", ["tests/test_runtimes_k8s_env.py"], equivalent={
        **{line: "a closing parenthesis is searched from i + 2: found, it is at index 2 or "
                 "later" for line in ("if close <= 0:", "if close < 1:")},
        "f\"{'XX, XX'.join(k for k in vf if k not in _LOADER_KEYS)}: its value is \"":
            "the API allows exactly one source in a valueFrom: one name joined is itself",
    }),
    "rt-rununit": Target(_RT + "_rununit.py", RT_RUN, equivalent={
        'async def contain(ctx: RecipeContext, server: Server, model: HostModel, workdir: str = '
        '"XX/XX"': "a default that is no absolute path is read as / on the next line",
        'workdir = workdir.lstrip("XX-XX") if workdir.lstrip("-").startswith("/") else "/"':
            "after the dashes comes '/' (the condition): an X is never stripped",
        "entries = [(EnvEntry(k, s.value, line=s.line, raw=f\"{k}={s.value}\"),": "the list "
        "is empty before --env-host's entries",
        **{line: "an --env-host entry's raw is never read (its origin is --env-host's, and "
                 "it has no env-file line)" for line in (
            "entries += [(EnvEntry(k, s.value, line=s.line, raw=None),",
            "entries += [(EnvEntry(k, s.value, line=s.line, ),")},
        **{line: "every unit setting and ExecStart= carries its evidence id (the systemd and "
                 "quadlet readers always cite them)" for line in (
            'f"host:{s.source}", s.evidence[0] if (s.evidence) or True else "")',
            'f"host:{s.source}", s.evidence[0] if s.evidence else "XXXX")',
            'entries += [(e, "", server.argv_evidence[0] if (server.argv_evidence) or True '
            'else "")',
            'entries += [(e, "", server.argv_evidence[0] if server.argv_evidence else "XXXX")')},
        "return [EnvEntry(k, v, ) for k, v in caller.items() if k.startswith(value[:-1])]":
            "raw is read only for an '=' (the origin's 'from the unit's NAME'): NAME* has none",
        **{line: "the last piece of a split on '/' is the same however many splits" for line in (
            'command and command[0].rsplit("/", )[-1] in ("bash", "sh", "python", "python3"))',
            'command and command[0].rsplit("/", 2)[-1] in ("bash", "sh", "python", "python3"))')},
        **{f'if kv.get("type", {d}) == "bind" and src and dst:': "any default but 'bind' "
           "is not a bind mount" for d in ("None", "", '"XXvolumeXX"', '"VOLUME"')},
    }),
    "rt-processes": Target(_RT + "_processes.py", ["tests/test_runtimes_procs_direct.py",
                                                   "tests/test_runtimes_procs.py"], equivalent={
        'kind, ident = started_by.get("kind"), str(started_by.get("id") or "XXXX")': "an "
        "empty id matches no server either way: no unit is named XXXX, a container id is hex",
    }),
    # not test_runtimes_manifests.py: whole investigations per mutant
    "rt-manifests": Target(_RT + "_manifests.py", ["tests/test_runtimes_k8s_found.py",
                                                   "tests/test_runtimes_k8s_direct.py"],
                           equivalent={
        **{f"for {each} in zip({xs}, got, {s}):": "zip of lists built one per element of "
           "the other: never of unequal length" for each, xs in (("place, g", "places"),
                                                                 ("home, entries", "homes"))
           for s in ("strict=None", "", "strict=False")},
        **{f'name = m["path"].rsplit("/", {s}': "the last component of an absolute path, "
           "however many splits" for s in (")[-1]", "2)[-1]", "1)[+1]")},
        **{f'for m in g.get("matches", {d}):': "a grep answer always holds matches (a failed "
           "search is said just above)" for d in ("None", "")},
        **{line: "the glob of the constant /home/* never fails: an absent, unreadable or "
                 "linked-out /home lists nothing (tried: absent, a file, a link out of the "
                 "root, a loop)" for line in (
            'listing = await ctx.tool("glob", optional=None, pattern="/home/*")',
            'listing = await ctx.tool("glob", pattern="/home/*")',
            'listing = await ctx.tool("glob", optional=False, pattern="/home/*")',
            'homes = ["/root", *(listing or {}).get("paths", None)]',
            'homes = ["/root", *(listing or {}).get("paths", )]')},
        **{f"out += [f\"{{home}}/{{e['name']}}\" for e in entries.get(\"entries\", {d})":
           "list_dir's answer always holds entries" for d in ("None", "")},
    }),
    "rt-quadlet": Target(_RT + "_quadlet.py", ["tests/test_runtimes_quadlet.py"], equivalent={
        **{f'for p in (got or {{}}).get("paths", {d}):': "the glob of a fixed pattern in a "
           "fixed directory never fails (an absent directory lists nothing)"
           for d in ("None", "")},
        **{f'seen.setdefault(p.rsplit("/", {s}, p)': "the last component of an absolute "
           "path, however many splits" for s in (")[-1]", "2)[-1]", "1)[+1]")},
        **{f"for server, install in zip(servers, installs, {s}):": "zip of lists built one "
           "per element of the other: never of unequal length"
           for s in ("strict=None", "", "strict=False")},
        **{f"caller = {{k: Setting({m}value=v, source=path, line=a.line, {o}": "the unit's "
           "settings are read by their key, source, line and evidence: contain() replaces "
           "them with the container's, and a line it cannot read leaves no server"
           for m, o in (("name=None, ", 'origin="unit",'), ("", 'origin="unit",'),
                        ("name=k, ", "origin=None,"), ("name=k, ", "evidence=[_cite(ctx, a)])"),
                        ("name=k, ", 'origin="XXunitXX",'), ("name=k, ", 'origin="UNIT",'))},
        'await contain(ctx, server, model, workdir.value if workdir else "XX/XX")': "contain() "
        "reads a working directory that is not absolute as /",
    }),
    "rt-interp": Target(_RT + "_interp.py", ["tests/test_runtimes_compose_interp.py",
                                             "tests/test_runtimes_compose_dotenv.py"]),
    # not test_runtimes_k8s_env.py: its 1,500 generated cases per mutant reach load_yaml
    # only to build their input
    "rt-yaml": Target(_RT + "_yaml.py", ["tests/test_runtimes_yaml.py",
                                         "tests/test_parse_limits.py"]),
    "rt-given": Target(_RT + "_given.py", ["tests/test_runtimes_given.py"]),
    # the image's ENTRYPOINT before a container's command (Compose, docker run, a Pod's args)
    "rt-entrypoint": Target(_RT + "_entrypoint.py", [
        "tests/test_runtimes_entrypoint.py", "tests/test_runtimes_compose_entrypoint.py",
        "tests/test_runtimes_rununit.py"], equivalent={
        **{line: "the last piece of a split on '/' is the same however many splits" for line in (
            *(f'command and command[0].rsplit("/", {n})[-1] in _PROGRAMS)' for n in ("", "2")),
            *(f'names = [e.rsplit("/", {n})[-1] for e in entry]' for n in ("", "2")))},
        'return any(names[i:i + 2] == ["vllm", "serve"] and _positional(names[i + 2:i + 4])':
        "_positional reads the first word of the slice only"}),
    "host-build": Target("agentkit/_hostmodel/_build.py", ["tests/test_host_build.py"],
                         equivalent={
        f'select_current(model, str(ctx.spec.inputs.get("question", {d})))': "without a "
        "question, 'None' or 'XXXX' is read instead of '': words no server name holds"
        for d in ("None", "", '"XXXX"')}),
})
# The fleet (issue 26, item 7). FLEET: the in-process fleet tests (the fold, the names, the
# orchestrator over snapshot fleets and fake transports), less those whose fixture runs a
# whole fleet (1000 hosts, or the 24-host reference fleet: seconds per mutant on the shared
# 2-core machine, and every mutant of a function they reach reruns them) and the CLI ones
# (subprocesses: mutmut cannot see which function they reach). The bottom line and the answer
# keep the reference fleet: its tests are what reads their words. The transports' own files
# start real engines (an SSH server, an srun stand-in, a Ray cluster): they are only the
# targets of the transport each one reaches.
_WHOLE_FLEET = ("exactly_one_bucket", "majority_range", "broken_snapshots_fail",
                "trace_records_each_host", "misbehave", "cli")
_REFERENCE = ("bottom_line_names", "empty_snapshots_fail", "json_and_html")
FLEET_FILES = ["tests/test_fleet_units.py", "tests/test_fleet.py", "tests/test_fleet_answers.py",
               "tests/test_fleet_attacks.py"]
FLEET = [*FLEET_FILES, "-k", " and ".join(f"not {n}" for n in (*_WHOLE_FLEET, *_REFERENCE))]
FLEET_WORDS = [*FLEET_FILES, "tests/test_messages.py",
               "-k", " and ".join(f"not {n}" for n in _WHOLE_FLEET)]
TARGETS.update({
    "fleet-fold": Target("agentkit/_fleet/_fold.py", FLEET, equivalent={
        **{line: "the marker key of a NaN or infinity is never shown (its text is the "
                 "number), only compared" for line in (
            'return {"XX\\u0000non-finiteXX": repr(value)}  # orjson would write null',
            'return {"\\u0000NON-FINITE": repr(value)}  # orjson would write null')},
        'self.where[where] = ""': "a dict used as an ordered set: its values are never read",
        **{line: "a third content seen at one locator: the excerpt is the 'differs' note "
                 "either way; only the citation's id changes, and stays unique" for line in (
            "if len(seen.seen) <= 2:", "if len(seen.seen) < 3:")},
        **{line: "a cache of folded node ranges: the same range, computed again" for line in (
            "got = None", "got = self._folded.get(None)")},
        **{line: "every task with a group of a fact ran on a host: ran is filled in the "
                 "same loop" for line in (
            "absent = [h for h in self.ran.get(task, None) if h not in have]",
            "absent = [h for h in self.ran.get(task, ) if h not in have]")},
        **{line: "a setting's list fact is in had for every host that gave it, and the "
                 "setting's meanings come from that list" for line in (
            "unset = [h for h in self.had.get((task, each), None) if h not in have]",
            "unset = [h for h in self.had.get((task, each), ) if h not in have]")},
        **{line: "no majority means at least two groups" for line in (
            "for g in groups[1:] if majority else (groups if (len(groups) > 1) or True else "
            "()):",
            "for g in groups[1:] if majority else (groups if len(groups) >= 1 else ()):")},
        'sha, excerpt = next(iter(seen.seen.items())) if same else ("", "XXXX")': "the "
        "excerpt of differing contents is replaced by the note",
        "who = nodes if (len(seen.hosts) == len(group.hosts)) and False else "
        "fold_names(seen.hosts)": "cites are deduplicated, so as many citing hosts as the "
        "group's are the group's hosts: the shortcut saves a fold only",
        "key = f\"{who}\\0{'XX,XX'.join(sorted(seen.seen))}\"": "any separator: hex "
        "digests hold neither 'X' nor ','",
        'return "ok", "XXXX"': "the reason of an ok host is never read",
        **{line: "orjson writes valid UTF-8: the error handler is never called" for line in (
            'text = v if isinstance(v, str) else group.key.decode("utf-8", )',
            'text = v if isinstance(v, str) else group.key.decode("UTF-8", "replace")',
            'text = v if isinstance(v, str) else group.key.decode("utf-8", "XXreplaceXX")',
            'text = v if isinstance(v, str) else group.key.decode("utf-8", "REPLACE")')},
        "rows: list[tuple[TaskResult, list[tuple[str, Any, bytes, list[str]]]]] = None":
            "replaced by the checked rows, or never read when the host is not ok",
        "self.duplicates.append(None)": "only the number of duplicates is said",
    }),
    "fleet-bottom": Target("agentkit/_fleet/_bottom.py", FLEET_WORDS, equivalent={
        **{f"f\"({{_short_nodes(fleet.buckets.get('{b}', {d}))}}){{rest}}\")": "a bucket "
           "the verdict names is never empty there (hosts answered: ok; some differ: "
           "differs), so its default is never used" for b in ("ok", "differs")
           for d in ("None", "", "'XXXX'")},
        "n_prob = min(len(problems), MAX_PROBLEMS if (facts) or True else room)": "with no "
        "differing fact, n_prob is computed again from the whole room just below",
        **{line: "n is at least 2 whenever there are more lines than n: the room is at "
                 "least 5 and problems take at most 3 of it when facts differ" for line in (
            "if n < 0:", "if n <= 1:")},
        'odd[f"{f.task} · {f.fact}"] = ""': "a dict used as an ordered set",
        **{line: "a node range never starts with a comma (check_name refuses an empty "
                 "name), so no comma is at index 0" for line in (
            'cut = nodes.rfind(",", None, MAX_NODES)', 'cut = nodes.rfind(",", 1, MAX_NODES)',
            "if cut < 0:")},
    }),
    "fleet-names": Target("agentkit/_fleet/_names.py", FLEET, equivalent={
        line: "fold's names pass check_name first: no '@', '*' or '?', the only names a "
              "ClusterShell group resolver reads" for line in (
            "return str(NodeSet.fromlist([check_name(n) for n in names], resolver=None))",
            "return str(NodeSet.fromlist([check_name(n) for n in names], ))")}),
    "fleet-outcome": Target("agentkit/_fleet/_outcome.py", FLEET),
    "fleet-meaning": Target("agentkit/_fleet/_meaning.py", FLEET, equivalent={
        'where = ", ".join(dict.fromkeys(str(i.get("where") or "XXXX") for i in items if':
            "only items that have a place are joined",
        'shown: Any = values[0] if (len(values) == 1) and False else " | ".join(values)':
            "one string joined is that string",
    }),
    "fleet-answer": Target("agentkit/_fleet/_answer.py", FLEET_WORDS, equivalent={
        **{f"facts = by_task.get(spec.id, {d})": "'not facts' reads None as [] just below"
           for d in ("None", "")},
        'return Section(title="Fleet: compared facts", claims=claims, )': "a section's tasks "
        "default to []",
        'status = next((f for f in facts if f.fact == "status"), )': "every task with facts "
        "has its status fact: the fold always compares it",
        **{line: "a task's status is always one of the four (TaskStatus)" for line in (
            'return value if (value in ("ok", "partial", "failed", "timed-out")) or True else '
            '"partial"',
            'return value if value in ("ok", "XXpartialXX", "failed", "timed-out") else '
            '"partial"',
            'return value if value in ("ok", "PARTIAL", "failed", "timed-out") else "partial"',
            'return value if value in ("ok", "partial", "failed", "timed-out") else '
            '"XXpartialXX"',
            'return value if value in ("ok", "partial", "failed", "timed-out") else "PARTIAL"')},
    }),
    "fleet-inventory": Target("agentkit/_fleet/_inventory.py", FLEET, equivalent={
        **{f"with open(path, {e}) as f:": "equivalent where the locale's encoding is "
           "UTF-8, as on the machines these runs use (not on a Latin-1 locale)"
           for e in ("encoding=None", "", 'encoding="UTF-8"')},
        **{f"text = f.read({n})": "a read bound far above any host list: only its size "
           "changes" for n in ("None", "17 * 1024 * 1024", "16 * 1025 * 1024",
                               "16 * 1024 * 1025")},
        **{f'lines = [ln.split("#", {n})[0].strip() for ln in text.splitlines()]': "the "
           "text before the first '#' is the same however many splits follow"
           for n in ("", "2")},
    }),
    # its own in-process tests first: the run's trace, batch, notes and deadline
    "fleet-run": Target("agentkit/_fleet/_run.py", ["tests/test_fleet_run.py", *FLEET], equivalent={
        **{f"with anyio.CancelScope(shield={v}):": "trace.end is synchronous: the scope "
           "holds no checkpoint for a cancellation to reach" for v in ("None", "False")},
        **{f"with anyio.{call}(deadline - anyio.current_time() if {cond}": "with no "
           "deadline (math.inf) the timeout is inf - now, infinite as None is"
           for call in ("fail_after", "move_on_after")
           for cond in ("(deadline < math.inf) or True", "deadline <= math.inf")},
        'broke = None': "read only as `broke or ...`: None and '' are both false",
    }),
    "fleet-record": Target("agentkit/_fleet/_record.py", FLEET, equivalent={
        **{line: "the digest only names a result within one trace; any size that does not "
                 "collide" for line in ("digest_size=13).hexdigest()", ").hexdigest()")},
        **{f"usage = r.usage.model_dump({m})": "Usage holds numbers only: its Python and "
           "JSON dumps are the same" for m in ("mode=None", 'mode="XXjsonXX"', 'mode="JSON"')},
    }),
    # each with its own direct tests first (the batch, the fan-out's bounds, the wire format's
    # edges, the snapshot fleet's buckets): the FLEET list alone reaches them only through
    # whole runs
    "fleet-batch": Target("agentkit/_fleet/_batch.py", ["tests/test_fleet_batch.py", *FLEET],
                          equivalent={
        **{f"raise AssertionError({m})": "unreachable: run_batch only runs tasks, it never "
           "plans or synthesizes" for m in (
            "None", '"XXa batch is planned by the callerXX"', '"A BATCH IS PLANNED BY THE CALLER"',
            '"XXa batch\'s results are folded by the callerXX"',
            '"A BATCH\'S RESULTS ARE FOLDED BY THE CALLER"')},
        **{f"orch = Orchestrator({p}, RecipeRunner(cat), {s}, host)": "run_tasks never calls the "
           "planner or the synthesizer: None in their slot is never called either"
           for p, s in (("None", "_Unused()"), ("_Unused()", "None"))},
        "deadline = anyio.current_time() + batch.deadline_s if (batch.deadline_s) or True else "
        "math.inf": "Batch validates deadline_s > 0: the condition is always true",
    }),
    "fleet-fanout": Target("agentkit/_fleet/_fanout.py", ["tests/test_fleet_fanout.py", *FLEET],
                           equivalent={
        "wall_s=round(time.perf_counter() - t0, 7))": "a measured wall time kept to 0.1 µs "
        "instead of 1 µs: no reader (the trace, the answer) depends on its seventh decimal",
    }),
    "fleet-wire": Target("agentkit/_fleet/_wire.py", ["tests/test_fleet_wire.py", *FLEET],
                         equivalent={
        "body = orjson.loads(stdout) if (stdout.strip()) or True else None": "orjson refuses "
        "blank input with JSONDecodeError, which also leaves body None",
        'body = ""': "read only as 'not a dict': '' and None are both not one",
        'text = stderr[-2000:].decode("UTF-8", "replace").strip()': "the same codec",
    }),
    "fleet-snapfleet": Target("agentkit/_fleet/_snapfleet.py",
                              ["tests/test_fleet_snapfleet.py", *FLEET], equivalent={
        **{line: "a measured wall time kept to 0.1 µs instead of 1 µs: no reader (the trace, "
                 "the answer) depends on its seventh decimal" for line in (
            "wall_s=round(time.perf_counter() - t0, 7))",
            "wall = round(time.perf_counter() - t0, 7)")},
    }),
    # test_fleet_ssh.py's three fleet runs (a hundred hosts twice, the real worker) cost
    # some 32 s a mutant that reaches them, and the attack round's 66 MiB reply must cross
    # SSH within 5 s (it did not in the niced clean run at a load of 13): the direct tests
    # pin what they check of the transport (bounded connections, one channel each, every
    # bucket, the reply's cap)
    "fleet-ssh": Target("agentkit/_fleet/_ssh.py", [
        "tests/test_fleet_ssh_direct.py",
        *(f"tests/test_fleet_attacks.py::test_{name}" for name in (
            "ssh_config_cannot_turn_host_key_checking_off",
            "user_known_hosts_file_none_does_not_disable_host_key_checking",
            "a_missing_known_hosts_file_is_not_unreachable",
            "a_stderr_flood_before_the_reply_does_not_stall_the_host",
            "ssh_auth_failure_is_failed_not_unreachable")),
        "tests/test_fleet_ssh.py::test_a_changed_host_key_is_its_own_bucket_and_never_said_to_add",
        "tests/test_fleet_ssh.py::test_host_key_checking_cannot_be_switched_off"], equivalent={
        "chunk = await stream.read(min(65537, cap - size))": "a read size only",
        "while drain and await stream.read(65537):": "a read size only",
        **{line: "asyncssh.Error's str() is its reason, and an OSError has no reason: str() "
                 "of the error reads the same" for line in (
            'text = str(getattr(None, "reason", "") or exc) or type(exc).__name__',
            'text = str(getattr(exc, "reason", None) or exc) or type(exc).__name__',
            'text = str(getattr(exc, "XXreasonXX", "") or exc) or type(exc).__name__',
            'text = str(getattr(exc, "REASON", "") or exc) or type(exc).__name__')},
        **{line: "a reply over the cap is failed by its size alone (_wire.outcome, the same "
                 "cap): its stderr, b'' or the text, is never shown" for line in (
            'return got["out"], got.get(None, b""), None',
            'return got["out"], got.get("XXerrXX", b""), None',
            'return got["out"], got.get("ERR", b""), None')},
    }),
    # the transports: their direct tests first (small real programs and servers, ms each);
    # the runs that wait out a host timeout while the real worker starts on the other hosts
    # lose that race in a niced mutmut worker on a loaded machine (the clean run failed at
    # 4 s and at 10 s), and the real-Slurm test runs agentkit in a child process, which
    # mutmut's per-function selection never credits: both stay in the suite, not here
    "fleet-slurm": Target("agentkit/_fleet/_slurm.py",
                          ["tests/test_fleet_slurm_direct.py", "tests/test_fleet_attacks.py",
                           "tests/test_fleet_slurm.py::test_job_nodes_come_from_scontrol"],
                          equivalent={
        'if nodes is None or nodes.group(1) in ("(null)", "XXXX"):': "the pattern's \\S+ "
        "never matches an empty NodeList",
        "done = await anyio.run_process([self.scontrol, *args], check=None)": "anyio checks "
        "the exit status only when check is true; None is not",
        'why = done.stderr.decode("UTF-8", "replace").strip()[:300]': "the same codec",
        'return done.stdout.decode("UTF-8", "replace")': "the same codec",
        "proc = await anyio.open_process(self.step(host), )": "anyio.open_process's stdin "
        "is a pipe by default",
        "if size <= cap:": "at size == cap the slice kept is empty",
        **{line: "both readers set their key before the task group ends, and a reader that "
                 "raises makes _talk raise: the initial values are never returned" for line in (
            'got: dict[str, bytes] = {"XXoutXX": b"", "err": b""}',
            'got: dict[str, bytes] = {"OUT": b"", "err": b""}',
            'got: dict[str, bytes] = {"out": b"XXXX", "err": b""}',
            'got: dict[str, bytes] = {"out": b"", "XXerrXX": b""}',
            'got: dict[str, bytes] = {"out": b"", "ERR": b""}',
            'got: dict[str, bytes] = {"out": b"", "err": b"XXXX"}')},
    }),
    # test_fleet_ray.py's cluster cannot run in a mutant's process: a Ray cluster started in
    # mutmut's forked child aborts it (SIGABRT, no output, 0.4 s), and the in-process stats
    # run timed out all four nodes at 8 s under nice 15. The direct tests stand in for Ray's
    # module with its documented contracts, and use its real exception classes.
    "fleet-ray": Target("agentkit/_fleet/_ray.py", ["tests/test_fleet_ray_direct.py"],
                        equivalent={"if left < 0:": "a float deadline is never met exactly"}),
})
# _run and the limits moved from _commands.py to _spawn.py (module size): the same tests,
# and the equivalents written for those lines, keyed by the mutated line, still apply.
TARGETS["spawn"] = Target("agentkit/_sandbox/_spawn.py", TARGETS["commands"].tests,
                          equivalent=TARGETS["commands"].equivalent)


@dataclass
class Score:
    name: str
    killed: int = 0
    survived: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    equivalent: int = 0
    other: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float:
        total = self.killed + len(self.survived) + len(self.untested)
        return self.killed / total if total and not self.broken else 0.0

    @property
    def broken(self) -> bool:
        return any(o.startswith("mutmut run exited") for o in self.other)


def _config(t: Target) -> str:
    tests = ", ".join(f'"{p}"' for p in t.tests)
    return (f'[tool.mutmut]\nsource_paths = ["agentkit/"]\nonly_mutate = ["{t.path}"]\n'
            'also_copy = ["tasks/", "prompts/", "examples/", "benchmarks/", "docs/"]\n'
            f"pytest_add_cli_args_test_selection = [{tests}]\n"
            'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"]\n')


def _scratch(t: Target) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="agentkit-mutation-"))
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for rel in filter(None, files):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, tmp / rel)
        elif src.is_symlink():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(src), tmp / rel)
    text = (tmp / "pyproject.toml").read_text()
    (tmp / "pyproject.toml").write_text(text + "\n" + _config(t))
    return tmp


def run_target(name: str, t: Target, log: Path) -> Score:
    tmp = _scratch(t)
    module = t.path[:-3].replace("/", ".")
    try:
        with log.open("a") as out:
            out.write(f"\n===== {name} ({t.path})\n")
            out.flush()
            done = subprocess.run([sys.executable, "-m", "mutmut", "run",
                                   f"{module}.{t.functions}"], cwd=tmp, stdout=out,
                                  stderr=out, check=False)
            results = subprocess.run([sys.executable, "-m", "mutmut", "results", "--all",
                                      "true"], cwd=tmp, capture_output=True, text=True).stdout
            out.write(results)
            diffs = _show_survivors(tmp, results, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    score = Score(name)
    pattern = re.compile(re.escape(module) + "." + t.functions.replace("*", ".*") + "$")
    for line in results.splitlines():
        mutant, _, status = line.strip().rpartition(": ")
        if not pattern.match(mutant):
            continue
        if status in ("survived", "no tests") and _equivalent(t, diffs.get(mutant, "")):
            score.equivalent += 1
        elif status == "killed":
            score.killed += 1
        elif status == "survived":
            score.survived.append(mutant)
        elif status == "no tests":
            score.untested.append(mutant)
        elif status in ("timeout", "segfault", "caught by type check"):
            score.killed += 1  # the test run did not pass: the mutant was detected
        else:
            score.other.append(f"{mutant}: {status}")
    if done.returncode != 0 or not (score.killed or score.survived or score.untested):
        # a broken run is a failure, never a perfect score over nothing
        score.other.append(f"mutmut run exited {done.returncode} with no mutant judged: "
                           f"see {log}")
    return score


def _show_survivors(tmp: Path, results: str, out: Any) -> dict[str, str]:
    """The diff of each mutant that lived, into the log: what a new test has to catch."""
    diffs: dict[str, str] = {}
    for line in results.splitlines():  # every line: a cap here once hid the last mutants
        mutant, _, status = line.strip().rpartition(": ")
        if status in ("survived", "no tests") and len(diffs) < 1000:
            shown = subprocess.run([sys.executable, "-m", "mutmut", "show", mutant], cwd=tmp,
                                   capture_output=True, text=True).stdout
            diffs[mutant] = shown
            out.write(f"--- {mutant} ({status})\n{shown}\n")
    return diffs


def _equivalent(t: Target, diff: str) -> bool:
    """A mutant is listed as equivalent by the mutated line it adds (names shift with edits)."""
    added = [ln[1:].strip() for ln in diff.splitlines()
             if ln.startswith("+") and not ln.startswith("+++")]
    return any(line in t.equivalent for line in added)


def changed_targets(rev: str) -> list[str]:
    diff = subprocess.run(["git", "diff", "--name-only", rev, "--"], cwd=REPO,
                          capture_output=True, text=True, check=True).stdout.split()
    return [n for n, t in TARGETS.items()  # a test may be named by node id (file::test)
            if t.path in diff or {x.split("::")[0] for x in t.tests} & set(diff)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.mutation")
    p.add_argument("names", nargs="*", help=f"targets (default: all): {', '.join(TARGETS)}")
    p.add_argument("--changed", metavar="REV", help="only targets whose files differ from REV")
    p.add_argument("--log", default=str(REPO / "mutation.log"))
    a = p.parse_args(argv)
    unknown = [n for n in a.names if n not in TARGETS]
    if unknown:
        p.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    names = changed_targets(a.changed) if a.changed else (a.names or list(TARGETS))
    log = Path(a.log)
    ok = True
    for name in names:
        s = run_target(name, TARGETS[name], log)
        total = s.killed + len(s.survived) + len(s.untested)
        mark = "ok " if s.rate >= BAR else "LOW"
        ok &= s.rate >= BAR
        print(f"{mark} {name:18} {s.killed}/{total} killed ({100 * s.rate:.1f} %), "
              f"{len(s.survived)} survived, {len(s.untested)} without tests, "
              f"{s.equivalent} equivalent", flush=True)
        for m in [*s.survived, *s.untested, *s.other]:
            print(f"      {m}")
    if not names:
        print("no mutation target is touched by this change")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
