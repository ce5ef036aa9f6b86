"""``python -m ragqa``: the same command line as the ``ragqa`` console script."""

from ragqa.cli import main

if __name__ == "__main__":
    main()
