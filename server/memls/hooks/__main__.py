from memls.hooks.client import main

raise SystemExit(main())
