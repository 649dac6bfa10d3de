"""The package's version, in a module of its own: the trace header and the fleet wire
protocol record it, and they sit far below the public facade that re-exports it."""

__version__ = "0.1.0"
