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

TITLES = {
    None: "help desk",
    Area.AGENT: "agent console",
    Area.EDITOR: "knowledge-base editor",
}


@cache
def _template(name: str) -> Template:
    return Template(files("chatbot.web").joinpath("templates", name).read_text(encoding="utf-8"))


def _fill(template: str, /, *, markup: dict[str, str] | None = None, **values: str) -> str:
    escaped = {key: html.escape(value) for key, value in values.items()}
    return _template(template).substitute(escaped | (markup or {}))


def app_page(*, area: Area | None, path: str, websocket_url: str) -> str:
    return _fill(
        "app.html",
        title=TITLES[area],
        area=area.value if area is not None else "chat",
        path=path,
        websocket_url=websocket_url,
    )


def signin_page(*, area: Area, error: str = "", name: str = "") -> str:
    alert = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    return _fill(
        "signin.html",
        title=TITLES[area],
        next=f"/{area.value}",
        name=name,
        markup={"message": alert},
    )


def message_page(*, heading: str, text: str, sign_out: bool = False, link: str = "") -> str:
    actions = []
    if link:
        actions.append(f'<a class="button" href="{html.escape(link)}">Try again</a>')
    if sign_out:
        actions.append(
            '<form class="inline" method="post" action="/signout">'
            '<button type="submit">Sign out</button></form>'
        )
    return _fill("message.html", heading=heading, text=text, markup={"actions": "\n".join(actions)})
