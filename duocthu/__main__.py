from duocthu.cli import main

raise SystemExit(main())
