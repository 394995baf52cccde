"""The frozen binary's entry point: the same ``main()`` as the ``attention-explorer`` command."""

import sys

from attention_explorer.cli import main

if __name__ == "__main__":
    sys.exit(main())
