"""Start hookbus's CLI with the toy host registered, as ``python tests/toy/launcher.py run
--host toy ...`` (a host nobody ships must not be reachable from ``hookbus`` itself)."""

import os
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))

from toy_driver import FACTS

from hookbus import hosts

hosts.register(FACTS)

if __name__ == "__main__":
    from hookbus.cli import main

    main()
