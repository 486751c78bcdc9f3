"""`python -m memelens.testing.server`: the test server as a process (see `memelens.testing.server.cli`)."""

import sys

from memelens.testing.server.cli import main

sys.exit(main())
