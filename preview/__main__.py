import sys

from preview.cli import main

sys.exit(main())
