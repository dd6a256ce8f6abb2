"""`python -m chatbot` runs the same CLI as the `helpdesk` console script."""

from chatbot.cli.main import main

raise SystemExit(main())
