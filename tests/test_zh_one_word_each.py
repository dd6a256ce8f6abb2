"""One Chinese word for each thing across the catalog: the Enter key is 回车 (the chat's boxes
said `按回车发送`, its rating prompt `请输入数字并按 Enter`), and a customer is 客户 (the
analytics screen said `顾客评分平均 4.5 分`)."""

from __future__ import annotations

from babel.messages.pofile import read_po

from tests.conftest import ROOT

CATALOG = ROOT / "chatbot" / "locales" / "zh" / "LC_MESSAGES" / "helpdesk.po"


def translated() -> list[tuple[str, str]]:
    """Each message's English (its first form) and each of its Chinese forms."""
    with CATALOG.open("rb") as file:
        catalog = read_po(file, locale="zh")
    pairs = []
    for message in catalog:
        if not message.id:
            continue
        english = message.id if isinstance(message.id, str) else message.id[0]
        forms = [message.string] if isinstance(message.string, str) else list(message.string or ())
        pairs += [(english, form) for form in forms]
    return pairs


def test_the_enter_key_is_called_huiche_in_every_message() -> None:
    naming = [(english, chinese) for english, chinese in translated() if "Enter" in english]
    assert len(naming) >= 15  # The chat's, the rating prompt's, the consoles' and dialogs'.
    for english, chinese in naming:
        assert "回车" in chinese and "Enter" not in chinese, (english, chinese)


def test_a_customer_is_kehu_everywhere() -> None:
    pairs = translated()
    assert not [chinese for _, chinese in pairs if "顾客" in chinese]
    ratings = [chinese for english, chinese in pairs if "Customer" in english and "rat" in english]
    assert len(ratings) >= 3 and all("客户" in chinese for chinese in ratings), ratings
