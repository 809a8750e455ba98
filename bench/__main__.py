"""``python -m bench``: see :mod:`bench.run`; ``python -m bench eras``: see :mod:`bench.eras`."""

import sys

if sys.argv[1:2] == ["eras"]:
    from bench.eras import main as eras

    sys.exit(eras(sys.argv[2:]))

from bench.run import main

sys.exit(main())
