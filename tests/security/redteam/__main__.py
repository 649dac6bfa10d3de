"""python -m tests.security.redteam [--quick] [--json OUT]"""

import sys

from .harness import main

sys.exit(main())
