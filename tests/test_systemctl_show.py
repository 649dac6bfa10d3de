"""``systemctl show -p …`` and ``systemctl show-environment`` read as systemd prints them
(``_hostmodel/runtimes/_systemctl_show.py``): the details the full-output case of
test_authority.py does not pin. From systemd's source, written before running:
src/systemctl/systemctl-show.c prints one ``Name=value`` line per property asked with ``-p``
(``ExecStart={ … start_time=[T] … }``, ``ExecMainStartTimestamp=`` empty or ``n/a`` when the
unit never started); src/systemctl/systemctl-set-environment.c prints ``NAME=value`` per
variable, names of letters, digits and ``_`` not starting with a digit (lower case allowed), the
value everything after the first ``=``."""

from __future__ import annotations

import pytest

from agentkit._hostmodel.runtimes._systemctl_show import (
    PROPERTIES,
    parse_show,
    parse_show_environment,
    show_argv,
)

EXEC = ("ExecStart={ path=/usr/bin/vllm ; argv[]=/usr/bin/vllm serve /m ; ignore_errors=no ; "
        "start_time=[Tue 2026-12-01 09:12:33 UTC] ; stop_time=[n/a] ; pid=42 ; code=(null) ; "
        "status=0/0 }")


def test_show_asks_each_property_with_p() -> None:
    argv = show_argv("vllm.service")
    assert argv[:3] == ["systemctl", "show", "vllm.service"]
    assert argv[3:] == [w for p in PROPERTIES for w in ("-p", p)]


def test_what_one_line_says_and_where() -> None:
    text = "\n".join(["garbage", "FragmentPath=/etc/systemd/system/v.service",
                      "Environment=A=1 NOEQUALS", "EnvironmentFiles=/etc/x", EXEC,
                      "ExecStart={ not the form }", "MainPID=42", "Environment=B=2"])
    s = parse_show("v.service", text)
    assert s.unit == "v.service"
    assert s.fragment == "/etc/systemd/system/v.service"
    assert s.lines == {"FragmentPath": 2, "Environment": 3, "EnvironmentFiles": 4,
                       "ExecStart": 5, "MainPID": 7}
    assert s.environment == [("A", "1"), ("B", "2")]  # the bad element stops its line only
    assert s.exec_start[0].start_time == "Tue 2026-12-01 09:12:33 UTC"
    assert s.problems == [
        "line 1: not a Name=value line",
        "Environment= (line 3): element 'NOEQUALS' is not NAME=VALUE",
        "EnvironmentFiles= (line 4): '/etc/x' is not 'PATH (ignore_errors=yes|no)'",
        "ExecStart= (line 6): '{ not the form }' is not systemd's exec-command form"]


@pytest.mark.parametrize("value", ["", "n/a"])
def test_a_unit_that_never_started_has_no_start_time(value: str) -> None:
    assert parse_show("v.service", f"ExecMainStartTimestamp={value}").started == ""


def test_show_environment_names_and_values() -> None:
    env, problems = parse_show_environment(
        "lower_case=1\n1BAD=x\nNCCL_IB_HCA==mlx5_0\nPATH=/usr/bin:/bin\n")
    assert env == {"lower_case": "1", "NCCL_IB_HCA": "=mlx5_0", "PATH": "/usr/bin:/bin"}
    assert problems == ["line 2: not NAME=value"]
