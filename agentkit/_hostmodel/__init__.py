"""The host model: one view of the model servers on a host, built from evidence.

Every task that needs "the server" reads it from here, so all tasks of a run agree on which
unit serves, what its effective environment is, and why (or that the host does not say).
Built through the sandbox tools, so each read is cited, cached for the run and replayable.
"""

from ._build import build_host_model
from ._engines import ENGINE_NAMES, SERVE_FLAGS, engine_of, parse_serve_args
from ._model import NOT_TUNING, HostModel, Server, Setting
from .runtimes._systemd import journal_argv

__all__ = ["ENGINE_NAMES", "NOT_TUNING", "SERVE_FLAGS", "HostModel", "Server", "Setting",
           "build_host_model", "engine_of", "journal_argv", "parse_serve_args"]
