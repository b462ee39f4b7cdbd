"""`python -m ccsim ...` is the same as the `ccsim` command."""

from ccsim.cli import main

raise SystemExit(main())
