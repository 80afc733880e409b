"""``python -m tirlite``: the ``tirlite`` command line (tirlite/cli.py)."""

import sys

from tirlite.cli import main

sys.exit(main())
