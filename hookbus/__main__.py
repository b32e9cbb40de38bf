"""``python -m hookbus``: the same command as the ``hookbus`` console script."""

import sys

from hookbus.cli import main

sys.exit(main())
