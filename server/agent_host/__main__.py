from agent_host.cli import main

raise SystemExit(main())
