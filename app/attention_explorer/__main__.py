"""`python -m attention_explorer` runs the same entry point as the `attention-explorer` command."""

import sys

from attention_explorer.cli import main

sys.exit(main())
