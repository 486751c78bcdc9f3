"""`python -m memegauge ...`: the same command line as the `memegauge` script (`memegauge.cli.main`)."""

import sys

from memegauge.cli import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
