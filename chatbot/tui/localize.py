"""Showing a widget's keys in a reader's language: each binding's English description is its
message id in the catalog (marked with `N_` where the binding is declared)."""

from __future__ import annotations

from dataclasses import replace

from textual.dom import DOMNode

from chatbot.i18n import Locale, translations


def localize_bindings(node: DOMNode, locale: Locale, **descriptions: str) -> None:
    """Give `node` its class's bindings with descriptions and tooltips in `locale`. A binding
    whose action is a key of `descriptions` gets that text instead (already in its words).

    Call it when the node is built, where its language is known then: a node is in the footer
    from its mount, and translated in `on_mount` its keys could be drawn in English first."""
    merged = type(node)._merged_bindings
    if merged is None:
        return
    t = translations(locale)
    bindings = merged.copy()
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
