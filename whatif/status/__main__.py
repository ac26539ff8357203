"""``python -m whatif.status``."""

import sys

from whatif.status.cli import main

sys.exit(main())
