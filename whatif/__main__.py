"""``python -m whatif``.

A Python package the what-if (or the policy pack it reads objects through) needs but that is not
installed is one line naming it and what to install, not a traceback: ``pip install -r
requirements.txt`` brings every one of them (``tests/whatif/test_install.py`` checks that list).
The simulator's modules run compiled when ``make whatif-compiled`` has built these sources
(``whatif.compiled``), else as pure Python.
"""

import sys

from whatif.compiled import activate

activate()  # the simulator's modules compiled with mypyc when a build of these sources exists
try:
    from whatif.cli import main
except ModuleNotFoundError as missing:
    sys.stderr.write(
        f"whatif: Python package {(missing.name or '?').split('.')[0]!r} is not installed: run "
        "`pip install -r requirements.txt` from the repository root\n"
    )
    sys.exit(2)

sys.exit(main())
