from ina.cli import main

raise SystemExit(main())
