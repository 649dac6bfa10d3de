"""The read-only tool sandbox: path confinement, command rules, config parsing, redaction."""
