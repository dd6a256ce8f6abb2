"""The Textual app. The only package that imports Textual; nothing outside it imports it."""

from chatbot.tui.app import HelpDeskApp, Mode, create_app

__all__ = ["HelpDeskApp", "Mode", "create_app"]
