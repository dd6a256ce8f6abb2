"""Showing a widget's keys in a reader's language: each binding's English description is its
message id in the catalog (marked with `N_` where the binding is declared)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from string import Formatter
from weakref import WeakKeyDictionary

from rich.text import Text
from textual.binding import BindingsMap
from textual.dom import DOMNode

from chatbot.i18n import N_, Locale, translations

TEXTUAL_KEYS = (N_("palette"), N_("Open the command palette"))
"""The words of the key Textual's `App` adds to itself at run time (Ctrl+P), for the catalog."""

_SOURCE: WeakKeyDictionary[DOMNode, BindingsMap] = WeakKeyDictionary()
"""Each localized node's bindings in English, as first seen, to translate from again."""


def localize_bindings(node: DOMNode, locale: Locale, **descriptions: str) -> None:
    """Give `node` its bindings (as first built, in English) with descriptions and tooltips in
    `locale`. A binding whose action is a key of `descriptions` gets that text instead (already
    in its words).

    Call it when the node is built, where its language is known then: a node is in the footer
    from its mount, and translated in `on_mount` its keys could be drawn in English first."""
    # The node's own bindings, not its class's: Textual's `App` adds the command palette's key
    # to itself when built, and the class's bindings would drop it from the footer.
    source = _SOURCE.get(node)
    if source is None:
        source = _SOURCE[node] = node._bindings.copy()
    t = translations(locale)
    bindings = source.copy()
    for key, items in bindings.key_to_bindings.items():
        bindings.key_to_bindings[key] = [
            replace(
                binding,
                description=descriptions.get(
                    binding.action, t.gettext(binding.description) if binding.description else ""
                ),
                tooltip=t.gettext(binding.tooltip) if binding.tooltip else "",
            )
            for binding in items
        ]
    node._bindings = bindings
    node.refresh_bindings()


def styled(template: str, styles: Mapping[str, str] | None = None, **values: object) -> Text:
    """`template` (a translated sentence with `{named}` placeholders) filled in, the values named
    in `styles` drawn in their style: a translation may put them anywhere in its sentence.
    Values are shown literally, never read as markup."""
    styles = styles or {}
    formatter = Formatter()
    text = Text()
    for literal, name, spec, conversion in formatter.parse(template):
        text.append(literal)
        if name is not None:
            value = formatter.format_field(
                formatter.convert_field(values[name], conversion), spec or ""
            )
            text.append(value, styles.get(name))
    return text
