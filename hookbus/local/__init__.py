"""This machine's plumbing under every floor: the state root, file trust, configuration discovery,
diagnostics, project trust, the interpreter's rules and the SQLite store."""
