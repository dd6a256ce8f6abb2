"""One browser session's app process: `chatbot.web.child chat|agent|editor ...`.

Started by `helpdesk serve` alone (forked from its zygote, or exec'd as
`python -m chatbot.web.child`), with arguments it derived from a verified cookie: the customer's
conversation, or the signed-in account's display name and whether it may open the editor. The
settings arrive in the environment under their documented names, as the server resolved them.
Sessions run no bot worker: `serve`'s bot workers answer every session's questions.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections.abc import Sequence

from chatbot.cli.options import Parser, print_error
from chatbot.config import load_settings
from chatbot.errors import HelpdeskError
from chatbot.i18n import DEFAULT_LOCALE, parse_locale
from chatbot.pgslots import NoConnectionToSpare
from chatbot.web.spec import from_argument


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="helpdesk-web-session", description=__doc__)
    parser.add_argument("area", choices=["chat", "agent", "editor"])
    parser.add_argument("--conversation", type=int, metavar="ID")
    parser.add_argument(
        "--agent",
        metavar="NAME",
        type=from_argument,
        help="the account's display name, percent-encoded, '-' too (`as_argument`)",
    )
    parser.add_argument("--editor", action="store_true", help="this account may open the editor")
    parser.add_argument(
        "--account", metavar="KEY", help="the account whose drafts these are (name@created)"
    )
    parser.add_argument(
        "--sign-in",
        metavar="TAG",
        help="which sign-in of the browser's this session is (a digest the server made): signing"
        " out ends its other sessions too, so they do not keep the claims",
    )
    parser.add_argument(
        "--locale",
        type=parse_locale,
        default=DEFAULT_LOCALE,
        help="the browser's language: a customer's chat starts in it (until their first message"
        " decides), an agent's or editor's screens are in it (unless ui.locale is set)",
    )
    parser.add_argument(
        "--timezone",
        metavar="ZONE",
        help="the browser's time zone (an IANA name the server checked): times show in it",
    )
    return parser


STDIN, STDERR = 0, 2
READY = b"helpdesk-session: ready\n"
"""Said on stderr: this process has started (see `chatbot.web.server.READY`)."""
DATABASE_FULL = b"helpdesk-session: database full\n"
"""Said on stderr before the one-line error: the database server refused a connection for want
of a free one (see `chatbot.web.server.DATABASE_FULL`)."""
PACKET_HEADER = 5
"""textual-serve's packets, both ways: a type byte (b"M" for meta), then the payload's length
in four bytes, big-endian."""
MAX_PACKET_BYTES = 1 << 20
SIGN_OUT_URL = "/signout"
"""The server's sign-out page (`HelpdeskServer.handle_signout_page`), where an agent's or
editor's Sign out sends their page."""


def conversation_from_server() -> int | None:
    """A new customer's conversation, started by the server once this process says it has
    started (imports and settings loaded, the desk open, the knowledge base there): one that
    fails before leaves no empty conversation.
    Read (textual-serve's meta packet) before the app's driver reads its input, from the same
    pipe. None: told to quit (or the server gone) first."""
    os.write(STDERR, READY)
    while (header := _read_exactly(STDIN, PACKET_HEADER)) is not None:
        size = int.from_bytes(header[1:], "big")
        if size > MAX_PACKET_BYTES or (payload := _read_exactly(STDIN, size)) is None:
            return None
        if header[:1] != b"M":
            continue  # Nothing is typed before the page is answered; kept out all the same.
        try:
            meta = json.loads(payload)
        except ValueError:
            continue
        if not isinstance(meta, dict) or meta.get("type") == "quit":
            return None
        conversation = meta.get("id")
        if meta.get("type") == "conversation" and type(conversation) is int and conversation > 0:
            return conversation
    return None


def _read_exactly(fd: int, size: int) -> bytes | None:
    """`size` bytes from `fd`, unbuffered (the driver reads the rest); None at its end."""
    data = b""
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.timezone:
        # A fork of the zygote has its time zone loaded already: set it again from TZ.
        os.environ["TZ"] = args.timezone
        time.tzset()
    try:
        from chatbot.tui.app import create_app, prepare_app

        # The settings' warnings (an unknown variable, a key in the file) were said once, by
        # `serve` at its start, from the same environment and file: every session repeated
        # them, unlabelled, into serve's log.
        logging.getLogger("chatbot.config").setLevel(logging.ERROR)
        settings = load_settings()
        if args.area == "chat":
            from chatbot.engine.suggestions import SharedVerdicts

            # The desk opened and the knowledge base checked as the app would, before saying
            # this process started: a missing knowledge base fails here, with no conversation.
            # The suggested questions are decided by serve's one decider, which its zygote
            # started (and named in the environment every fork inherits): a customer's session
            # holds no engine, which was the whole knowledge base again in each of them.
            prepared = prepare_app(
                settings,
                mode="chat",
                conversation_id=args.conversation,
                bot=False,
                editor=False,
                shared_suggestions=SharedVerdicts.from_environment(),
            )
            if args.conversation is None:
                try:
                    args.conversation = conversation_from_server()
                    if args.conversation is None:  # Told to quit before it had one.
                        prepared.close()
                        return 0
                    prepared = prepared.opening(args.conversation)
                except BaseException:
                    prepared.close()
                    raise
            from chatbot.drafts import drafts_for
            from chatbot.tui.screens.chat import ChatScreen

            # What the customer had typed and not sent when a session of theirs ended (serve
            # restarting) is kept for the next, of this database's conversation alone.
            ChatScreen.drafts = drafts_for(settings.store.db)
            # A customer never reaches the editor, nor any conversation but their own.
            app = create_app(
                prepared,
                mode="chat",
                conversation_id=args.conversation,
                bot=False,
                editor=False,
                fixed_conversation=True,
                customer_locale=args.locale,
            )
        else:
            if not args.agent:
                raise HelpdeskError(f"an {args.area} session needs --agent")
            from chatbot.desk.aio import AsyncDesk
            from chatbot.drafts import keep_for

            AsyncDesk.browser_sign_in = args.sign_in

            # What the agent had typed and not sent, or the editor not saved, when a session of
            # theirs ended (the page closed, serve restarting) is kept for their account, of this
            # database's conversations and this knowledge base's passages alone.
            keep_for(
                settings.store.db,
                str(settings.knowledge_base.path),
                account=args.account or args.agent,
            )
            app = create_app(
                settings,
                mode=args.area,
                agent=args.agent,
                agent_locale=args.locale,
                bot=False,
                editor=args.area == "editor" or args.editor,
                # The account signed in in this browser: the palette offers to sign it out.
                sign_out_url=SIGN_OUT_URL,
            )
    except HelpdeskError as error:
        if isinstance(error, NoConnectionToSpare):
            os.write(STDERR, DATABASE_FULL)
        print_error(str(error))
        return 2
    app.run()
    if app.startup_error is not None:  # The knowledge base could not be loaded.
        print_error(app.startup_error)
        return 2
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
