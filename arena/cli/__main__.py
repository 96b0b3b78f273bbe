"""``python -m arena.cli ARGS``: the ``arena`` command."""

import sys

from arena.cli import main

# guarded: a process that multiprocessing starts by spawning imports the main module
# again, and must not run the command a second time
if __name__ == "__main__":
    sys.exit(main())
