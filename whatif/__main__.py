"""``python -m whatif``."""

import sys

from whatif.cli import main

sys.exit(main())
