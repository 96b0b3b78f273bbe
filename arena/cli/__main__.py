"""``python -m arena.cli ARGS``: the ``arena`` command."""

import sys

from arena.cli import main

# guarded: a process started from a fork server or by spawning (the web's frames worker)
# imports the main module again, and must not run the command a second time
if __name__ == "__main__":
    sys.exit(main())
