from memls.launch import main

raise SystemExit(main())
