"""The `opsagent` command line: `main` parses and dispatches; each command consumes the kernel's event stream.

Also the terminal's view of a run, its approver, and the text reports of `replay`, `stats` and `eval`.
"""
