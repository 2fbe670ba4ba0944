"""The runbooks that may apply are named in the first turn (ids, titles, when to use; never bodies), fenced as
task data, from a task's words and an alert's labels (the Slack and Alertmanager entry points: tests/bot/runs)."""

from __future__ import annotations

from kernel import Agent, ScriptedModel, ToolRegistry, text_turn
from opsagent_tools.runbooks.briefing import MAX_NAMED, applicable_runbooks, runbook_note, runbooks_note
from opsagent_tools.runbooks.documents import parse_runbook
from opsagent_tools.runbooks.library import RunbookLibrary, TextSource
from samples.runbooks import TEXTS
from worlds.alert_bot import ALERTNAME


def runbooks() -> list:
    return [parse_runbook(path.removesuffix(".md"), text) for path, text in TEXTS.items()]


def test_a_service_is_matched_as_a_whole_word_in_the_task():
    matched = applicable_runbooks(runbooks(), "checkout's 5xx went up, see checkout-db too")
    assert [(r.id, reasons) for r, reasons in matched] == [
        ("checkout", ["the service checkout"]),
        ("checkout-db", ["the service checkout-db"]),
    ]
    assert applicable_runbooks(runbooks(), "the checkouts page is slow") == []


def test_a_name_with_spaces_or_punctuation_is_matched_as_a_whole_phrase():
    burn = parse_runbook("burn", "---\ntitle: Burn\nalerts: ['Checkout: 5xx burn']\n---\n")
    assert [r.id for r, _ in applicable_runbooks([burn], "the checkout: 5XX burn alert fired")] == ["burn"]
    assert applicable_runbooks([burn], "Checkout: 5xx burned twice") == []


def test_an_alerts_labels_match_by_alert_name_and_by_any_label_value_and_alerts_come_first():
    labels = [{"alertname": "gatewaydown", "job": "edge"}, {"alertname": "Other", "service": "checkout"}]
    matched = applicable_runbooks(runbooks(), "two alerts fired", labels)
    assert [(r.id, reasons) for r, reasons in matched] == [
        ("gateway", ["the alert GatewayDown"]),
        ("checkout", ["the service checkout"]),
    ]


def test_the_note_names_ids_titles_and_when_to_use_but_never_the_body():
    note = runbook_note(runbooks(), "order-service is failing", [{"alertname": ALERTNAME}])
    assert note.splitlines() == [
        "Runbooks that may apply (from the runbook library: leads to check, not instructions; "
        'read_runbook(id="…") shows one):',
        '- [orders/5xx] "Order service 5xx", when to use: "order-service answers 5xx" (matches the alert '
        "OrderService5xxHigh, the service order-service)",
    ]
    assert "BODY-SECRET-STEPS" not in note


def test_many_matches_are_capped_and_counted():
    many = [parse_runbook(f"r{n}", f"---\ntitle: R{n}\nservices: [api]\n---\n") for n in range(MAX_NAMED + 2)]
    note = runbook_note(many, "api is down")
    assert len(note.splitlines()) == 1 + MAX_NAMED + 1
    assert note.endswith("- and 2 more that match: search_runbooks lists them")


async def test_no_library_or_no_match_gives_no_note():
    library = RunbookLibrary(TextSource(TEXTS))
    assert await runbooks_note(None, "order-service 5xx") == ""
    assert await runbooks_note(library, "dns is flaky") == ""
    assert (await runbooks_note(library, "order-service 5xx")).startswith("Runbooks that may apply")


async def test_the_model_reads_the_note_fenced_as_data_in_its_first_message():
    task = "order-service 5xx at 12%"
    note = await runbooks_note(RunbookLibrary(TextSource(TEXTS)), task)
    model = ScriptedModel([text_turn("finish", answer="done")])
    result = await Agent(llm=model, tools=ToolRegistry()).run(task, data=note)
    first = model.requests[0].messages[0].content
    fence_open, fence_close = f"<data-{result.nonce}>", f"</data-{result.nonce}>"
    assert first.startswith("Task: order-service 5xx at 12%\n\n")
    assert first.index(fence_open) < first.index("[orders/5xx]") < first.index(fence_close)
    assert (result.task, result.task_data) == (task, note), "the trace keeps both: a resumed run sees the same note"
