"""Server-rendered HTML: the page that hosts an app, the sign-in form and short messages.

Every value is HTML-escaped on the way in, except the few fragments built here from fixed markup
(themselves escaping what they hold); the templates hold no inline script or style.
"""

from __future__ import annotations

import html
from functools import cache
from importlib.resources import files
from string import Template

from chatbot.accounts.models import Area
from chatbot.i18n import DEFAULT_LOCALE, N_, Locale, translations

TITLES = {
    None: N_("help desk"),
    Area.AGENT: N_("agent console"),
    Area.EDITOR: N_("knowledge-base editor"),
}
"""What each page opens, in English: translated where shown, in the browser's language."""

SAVED = {
    None: N_("Everything you sent is saved."),
    Area.AGENT: N_(
        "Everything you sent is saved. A reply or note you had not sent is back when you open "
        "its conversation again."
    ),
    Area.EDITOR: N_(
        "Everything you saved is kept. A passage you had not saved is back, unsaved, when you "
        "open the editor again."
    ),
}
"""What an ended session left, by area, said under "This session has ended.": an agent or an
editor sent or saved what they chose to; what they had not is kept for their account and comes
back (`chatbot.drafts`), not saved in their place."""


@cache
def _template(name: str) -> Template:
    return Template(files("chatbot.web").joinpath("templates", name).read_text(encoding="utf-8"))


def _fill(template: str, /, *, markup: dict[str, str] | None = None, **values: str) -> str:
    escaped = {key: html.escape(value) for key, value in values.items()}
    return _template(template).substitute(escaped | (markup or {}))


def title(area: Area | None, locale: Locale = DEFAULT_LOCALE) -> str:
    return translations(locale).gettext(TITLES[area])


def app_page(
    *, area: Area | None, path: str, websocket_url: str, locale: Locale = DEFAULT_LOCALE
) -> str:
    """The page a session's terminal is drawn in; its own few words (connecting, the session
    ended) are in `locale`, the app inside follows its settings or the conversation."""
    t = translations(locale)
    shown = title(area, locale)
    # A signed-in agent's or editor's way out, beside "Start again" (which went straight back in
    # as the same account for the cookie's 12 hours): the same form as the sign-out page's.
    sign_out = "" if area is None else _sign_out_form(locale)
    return _fill(
        "app.html",
        lang=locale,
        title=shown,
        connecting=t.gettext("{title}: connecting…").format(title=shown),
        ended=t.gettext("This session has ended."),
        # Why, shown by closed.js from the reason the server closed the session with.
        signed_out=t.gettext("You were signed out: sign in again to go on."),
        expired=t.gettext("Your session has expired: sign in again to go on."),
        opened_again=t.gettext("It was opened again in another tab or window."),
        shutting_down=t.gettext(
            "The help desk is restarting: this page starts again by itself once it is back."
        ),
        # In place of "This session has ended.": its app process ended before it drew anything
        # (and nothing was sent, let alone saved).
        failed_to_start=t.gettext("The help desk cannot open now"),
        try_again=t.gettext("Try again"),
        retrying=t.gettext("This page tries again by itself in a minute."),
        # Why "Start again" waits, when the server says its database is out (`/healthz`).
        database_out=t.gettext(
            "The help desk cannot reach its database just now. This page goes on by itself once "
            "it can."
        ),
        saved=t.gettext(SAVED[area]),
        start_again=t.gettext("Start again"),
        start=t.gettext("Start"),
        area=area.value if area is not None else "chat",
        path=path,
        websocket_url=websocket_url,
        markup={"sign_out": sign_out},
    )


def _sign_out_form(locale: Locale, *, focus: bool = False) -> str:
    """A button that signs this browser out: a form posted to `/signout` (the server checks its
    Origin), as a link's GET would let any other site sign the browser out. With `focus`, it
    has the keyboard as the page opens."""
    label = html.escape(translations(locale).gettext("Sign out"))
    autofocus = " autofocus" if focus else ""
    return (
        '<form class="inline sign-out" method="post" action="/signout">'
        f'<button type="submit"{autofocus}>{label}</button></form>'
    )


def signin_page(
    *, area: Area, error: str = "", name: str = "", locale: Locale = DEFAULT_LOCALE
) -> str:
    """`error` is in `locale` already."""
    t = translations(locale)
    shown = title(area, locale)
    alert = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    return _fill(
        "signin.html",
        lang=locale,
        page_title=t.gettext("Sign in: {title}").format(title=shown),
        lead=t.gettext("Sign in to open the {title}.").format(title=shown),
        name_label=t.gettext("Name"),
        password_label=t.gettext("Password"),
        submit=t.gettext("Sign in"),
        next=f"/{area.value}",
        name=name,
        # Refused, the page comes back with the name filled in: the password is what to type.
        markup={
            "message": alert,
            "name_focus": "" if name else " autofocus",
            "password_focus": " autofocus" if name else "",
        },
    )


def message_page(
    *,
    heading: str,
    text: str,
    sign_out: bool = False,
    link: str = "",
    retry_s: int | None = None,
    elsewhere: tuple[str, str] | None = None,
    locale: Locale = DEFAULT_LOCALE,
) -> str:
    """`heading` and `text` are in `locale` already; the buttons are put in it here. With
    `retry_s`, the browser tries `link` again by itself after that many seconds. `elsewhere`: a
    page to go to instead (its path, and its button's label, in `locale`)."""
    t = translations(locale)
    actions = []
    if elsewhere is not None:
        path, label = elsewhere
        actions.append(f'<a class="button" href="{html.escape(path)}">{html.escape(label)}</a>')
    if link:
        label = html.escape(t.gettext("Try again"))
        actions.append(f'<a class="button" href="{html.escape(link)}">{label}</a>')
    if sign_out:
        # The page's only button (the sign-out page's) has the keyboard: reached from the
        # palette's "Sign out", Enter did nothing there until Tab was pressed.
        actions.append(_sign_out_form(locale, focus=not actions))
    refresh = ""
    if retry_s is not None and link:
        url = html.escape(link)
        refresh = f'<meta http-equiv="refresh" content="{int(retry_s)}; url={url}">'
    return _fill(
        "message.html",
        lang=locale,
        heading=heading,
        text=text,
        markup={"actions": "\n".join(actions), "refresh": refresh},
    )
