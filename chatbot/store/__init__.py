"""Conversation storage: the interface (`interface`), and its SQLite implementation (`sqlite`,
with its migrations in `schema`). Imports nothing itself, so importing the interface never loads
a backend. Never imports Textual."""
