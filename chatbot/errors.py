"""The one exception type the CLI and the app turn into a one-line message for a person."""


class HelpdeskError(Exception):
    """A problem a person can fix: bad input, a bad file, a bad setting.

    The message is a single line that says what is wrong and where; callers print it as it is,
    never with a traceback.
    """
