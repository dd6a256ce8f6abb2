"""The desk: the conversation state machine, the service every change goes through, the bot
worker. Never imports Textual, and reaches storage through `chatbot.store.interface` only."""
