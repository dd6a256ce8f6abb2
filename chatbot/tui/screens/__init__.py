"""The app's screens, one per module. `MODE_SCREENS` in `chatbot.tui.app` says which opens first."""
