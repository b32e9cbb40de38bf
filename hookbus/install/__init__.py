"""Install as a library: what ``hookbus install``, ``uninstall``, ``verify`` and
``doctor`` do to a host's own configuration, below the CLI, returning what they found
and did instead of printing it (:mod:`hookbus.cli.install` parses the arguments and
says the results).

- :mod:`~hookbus.install.plan`: what an install follows and writes: the configuration
  of a scope and its compiled index, the interpreter, the command's form (installed,
  chosen, in effect);
- :mod:`~hookbus.install.checks`: what is refused before anything changes (a link out
  of the project, another way of installing the host already in place);
- :mod:`~hookbus.install.write`: install and uninstall, one result per file;
- :mod:`~hookbus.install.verify`: reading an install back: its drift from the
  configuration, and the fix;
- :mod:`~hookbus.install.git`: what git says of a settings file (tracked, ignored).

It sits above the runtime (it compiles the index in a child, as a hook would) and below
the CLI; nothing a hook runs imports it.
"""
