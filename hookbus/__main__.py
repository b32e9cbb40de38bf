"""``python -m hookbus`` (and ``python <hookbus>/__main__.py``, as installed hooks run
it): the same command as the ``hookbus`` console script."""

import sys

if sys.argv[1:2] == ["run"]:
    # A hook: until its own handlers are in place (hookbus.runtime.emergency), a Ctrl-C or
    # the host's SIGTERM must not print a traceback or end it with no reply at all.
    import signal

    for _sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(_sig, signal.SIG_IGN)

try:
    from hookbus.cli import main
except ImportError:
    # Run by path from a checkout this interpreter no longer imports hookbus from (an
    # editable install removed): use the package beside this file rather than fail open.
    import os

    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from hookbus.cli import main

sys.exit(main())
