"""``python -m arena.cli ARGS``: the ``arena`` command."""

import sys

from arena.cli import main

sys.exit(main())
