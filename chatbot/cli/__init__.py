"""The `helpdesk` command line."""
