"""`python -m workbench.cli`: the same entry point as the `workbench` command."""

from . import main

raise SystemExit(main())
