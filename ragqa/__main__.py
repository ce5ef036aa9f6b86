"""``python -m ragqa``: the same command line as the ``ragqa`` console script."""

import gc

if __name__ == "__main__":
    # Start-up creates objects that live until the process exits (modules, classes, schemas), so
    # collecting while importing frees next to nothing; main() freezes them and turns it back on.
    gc.disable()

from ragqa.cli import main

if __name__ == "__main__":
    main()
