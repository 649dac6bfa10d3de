"""CLI errors: one line saying what was wrong and what to do, and a documented exit code."""

from __future__ import annotations

EXIT_CODES = {
    0: "answered",
    1: "internal error (a bug: please report it with the trace)",
    2: "bad input (arguments, root, config, task template, trace file)",
    3: "the catalog cannot answer this question and no LLM is configured",
    4: "the model could not be used (unreachable, refused, or no valid plan)",
    5: "a tool refused or failed (agentkit tools call)",
    6: "a replay diverged from its trace (the code asks what the trace never recorded)",
    7: "nothing could be established under --root (the answer still says why)",
    8: "the replayed trace holds no answer (its run stopped before answering)",
    9: "some hosts of a fleet did not answer (the answer names them and why)",
    10: "doctor: something agentkit is configured to use cannot work (each line says the fix)",
    130: "interrupted",
}


class CLIError(Exception):
    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code
