"""``python -m agentls.testing.fake_model``: see :mod:`agentls.testing.fake_model.cli`."""

from .cli import main

raise SystemExit(main())
