"""The read-only tool sandbox: the host (``_host``), tools (``_tool``), path confinement,
command rules and running, config parsing, the kernel layer, and redaction (``_redact/``)."""
