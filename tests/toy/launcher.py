"""Start hookbus's CLI with the toy host registered, as ``python tests/toy/launcher.py run
--host toy ...`` (a host nobody ships must not be reachable from ``hookbus`` itself).
The toy host is the folder ``toy/`` beside this file, laid out as a host's folder of
``hookbus/hosts/`` is; this file's one line of registry is ``hosts.register("toy")``.
Importing it registers the toy host in the importing process too."""

import os
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))

from hookbus import hosts

hosts.register("toy")

if __name__ == "__main__":
    from hookbus.cli import main

    main()
