"""``python -m preview``: run the preview, flush its output, and exit without tearing the heap down.

Freeing a thousand teams' worth of SDK objects one by one at interpreter exit took ~15% of a
1,000-team run and does nothing a process that is ending needs: every output file is written
and closed, and the pack process stopped, before ``main`` returns.
"""

import os
import sys

from preview.cli import main

code = main(exits_after=True)
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)
