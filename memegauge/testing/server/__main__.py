"""`python -m memegauge.testing.server`: the test server as a process (see `memegauge.testing.server.cli`)."""

import sys

from memegauge.testing.server.cli import main

sys.exit(main())
