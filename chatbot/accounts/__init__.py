"""Accounts of the people who work the desk (agents, editors, admins): their roles, passwords and
sign-in limits. The web front end and `helpdesk users` go through `AccountService`; the store keeps
the records. Never imports Textual."""
