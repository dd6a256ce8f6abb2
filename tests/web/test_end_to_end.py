"""The whole loop in real browsers: a customer asks, the bot answers with its source or hands
over, an agent signs in in a second browser context, claims the conversation and replies, and the
customer's page shows the reply. Checked where results land (the store, the server's sessions)
and in screenshots that must change; the screenshots are kept for a person to look at."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Browser

from tests.web.conftest import PASSWORD, VIEWPORT
from tests.web.harness import (
    Served,
    agent_replies,
    children,
    command_line,
    conversation_state,
    screenshot_changes,
    settled,
    transcript,
    type_into_input,
    wait_for,
)
from tests.web.helpers import claim_first_row

Q1 = "I was charged twice for the same ride, can I get my money back?"
Q3 = "There were no free docks at the station so I kept riding. Will I pay a late fee?"
REPLY = "No late fee: we waive it whenever the docks are full. Sorry for the trouble!"


def test_a_customer_and_an_agent_in_two_browsers(
    browser: Browser, fresh_server: Served, artifacts: Path
) -> None:
    served = fresh_server
    customer_context = browser.new_context(viewport=VIEWPORT)
    agent_context = browser.new_context(viewport=VIEWPORT)
    try:
        customer = customer_context.new_page()
        customer.goto(served.url + "/")
        customer.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
        conversation = wait_for(
            lambda: [s.conversation for s in served.sessions() if s.conversation], what="the chat"
        )[0]
        assert conversation is not None
        empty = settled(customer)

        # The cookbook's first question: answered from the help center, with its source, by
        # the bot worker `serve` runs (the session itself runs none).
        type_into_input(customer, Q1)
        answer = wait_for(
            lambda: [m for m in transcript(served.db, conversation) if m[0] == "bot"],
            what="the bot's answer in the store",
        )
        assert answer[0][2] == "card-charged-twice"
        answered = settled(customer)
        assert answered != empty
        customer.screenshot(path=artifacts / "customer-answer.png")

        # The third: no passage is good enough, so a person will reply.
        type_into_input(customer, Q3)
        wait_for(
            lambda: conversation_state(served.db, conversation)[0] == "waiting",
            what="the conversation in the queue",
        )
        handed_over = settled(customer)
        assert handed_over != answered
        customer.screenshot(path=artifacts / "customer-handoff.png")

        # The agent signs in in a second browser context and sees it in the queue.
        agent = agent_context.new_page()
        agent.goto(served.url + "/agent")
        agent.screenshot(path=artifacts / "sign-in.png")
        agent.fill("#name", "ana")
        agent.fill("#password", PASSWORD)
        agent.click("button[type=submit]")
        agent.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
        settled(agent, still_s=0.3)  # Its wait times tick every second.
        agent.screenshot(path=artifacts / "agent-queue.png")

        # Opening the conversation writes nothing to watch for, so the agent opens the first
        # row and presses the claim key again each second until the store has the claim (on a
        # busy machine the queue may fill, or the conversation open, after a try; once it is
        # open, a click on the row's place lands harmlessly in the transcript).
        def claimed_or_try_again() -> bool:
            if claimed(served, conversation):
                return True
            claim_first_row(agent)
            return False

        wait_for(
            claimed_or_try_again, what="the claim, under the account's display name", every=1.0
        )
        # The customer is told who joined; only then does the agent write.
        screenshot_changes(customer, handed_over, what="the customer to see the agent join")
        before_reply = settled(customer)
        agent.keyboard.type(REPLY)
        agent.keyboard.press("Enter")
        wait_for(
            lambda: agent_replies(served.db, conversation) == [("Ana P.", REPLY)],
            what="the reply in the store",
        )
        settled(agent, still_s=0.3)  # Its queue's wait and claim times tick every second.
        agent.screenshot(path=artifacts / "agent-reply.png")

        # The customer's page shows the reply.
        screenshot_changes(customer, before_reply, what="the reply on the customer's page")
        settled(customer)
        customer.screenshot(path=artifacts / "customer-reply.png")
        # Served by the bot worker `serve` runs: a `helpdesk bot` process of its own.
        assert any(
            command_line(pid)[-2:] == ["chatbot", "bot"] for pid in children(served.process.pid)
        )
    finally:
        customer_context.close()
        agent_context.close()


def claimed(served: Served, conversation: int) -> bool:
    return conversation_state(served.db, conversation) == ("claimed", "Ana P.")


def test_an_editor_signs_in_to_the_knowledge_base_editor(
    browser: Browser, served: Served, artifacts: Path
) -> None:
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        page.goto(served.url + "/editor")
        page.fill("#name", "eddie")
        page.fill("#password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_selector("body.-first-byte", state="attached", timeout=60_000)
        session = wait_for(
            lambda: [s for s in served.sessions() if s.area == "editor"], what="the editor"
        )[0]
        assert session.account == "eddie"
        settled(page)
        page.screenshot(path=artifacts / "editor.png")
        # An editor cannot open the agent console.
        response = page.goto(served.url + "/agent")
        assert response is not None and response.status == 403
    finally:
        context.close()
