"""``python -m bench``: see :mod:`bench.run`; ``python -m bench eras``: see :mod:`bench.eras`;
``python -m bench held``: see :mod:`bench.held`; ``python -m bench threads``: see
:mod:`bench.threads`."""

import sys

if sys.argv[1:2] == ["held"]:
    from bench.held import main as held

    sys.exit(held(sys.argv[2:]))

if sys.argv[1:2] == ["threads"]:
    from bench.threads import main as threads

    sys.exit(threads(sys.argv[2:]))

if sys.argv[1:2] == ["eras"]:
    from bench.eras import main as eras

    sys.exit(eras(sys.argv[2:]))

from bench.run import main

sys.exit(main())
