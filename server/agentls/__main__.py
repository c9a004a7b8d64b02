from agentls.cli import main

raise SystemExit(main())
