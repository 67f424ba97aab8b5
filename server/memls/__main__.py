from memls.cli import main

raise SystemExit(main())
