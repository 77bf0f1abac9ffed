from schemarag.cli import main

raise SystemExit(main())
