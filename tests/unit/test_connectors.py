"""Confluence and Slack API clients over real HTTP against local servers (no stores)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from knotwork.domain.models import Document, ProcessingStatus, SourceSystem
from knotwork.ingestion.connectors.confluence import ConfluenceClient, ConfluenceSource, site_url
from knotwork.ingestion.connectors.http import ConnectorError, RetryPolicy, parse_retry_after
from knotwork.ingestion.connectors.slack import SlackApiError, SlackClient, SlackSource
from tests.support.fake_apis import FakeConfluence, FakeSlack, serve

FAST = RetryPolicy(max_retries=3, base_delay=1.0, max_delay=10.0)


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def confluence() -> Iterator[FakeConfluence]:
    api = FakeConfluence(users={"acc-1": "Ada Lovelace", "acc-2": "Grace Hopper"})
    for i in range(1, 6):
        api.add_page(str(i), f"Page {i}", f"<h1>Page {i}</h1><p>Body of page {i}.</p>")
    api.add_page("9", "Old page", "<p>gone</p>", status="trashed")
    with serve(api):
        yield api


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    api = FakeSlack(page_size=2)
    api.add_user("U1", "Alice Chen")
    api.add_user("U2", "Bob Stone")
    api.add_user("U3", "Carol Diaz")
    api.add_channel("C1", "general")
    api.add_channel("C2", "random", member=False)
    api.post("C1", "1700000000.000100", "U1", "Hello <@U2>, see <#C2|random>")
    api.post("C1", "1700000100.000100", "U2", "Deploy plan?")
    api.post("C1", "1700000110.000100", "U1", "Tomorrow at 9.", thread_ts="1700000100.000100")
    api.post("C1", "1700000120.000100", "U3", "Ship it.", thread_ts="1700000100.000100")
    api.post("C1", "1700000200.000100", "U1", "joined", subtype="channel_join")
    with serve(api):
        yield api


def _conf_client(api: FakeConfluence, sleeps: Sleeps | None = None) -> ConfluenceClient:
    return ConfluenceClient(api.base_url + "/wiki/", api.token, email=api.email, policy=FAST,
                            sleep=Sleeps() if sleeps is None else sleeps)


# --------------------------------------------------------------------------- retry policy


def test_retry_after_parsing_and_bounded_backoff() -> None:
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Wed, 01 Jan 2025 12:00:30 GMT", now) == 30.0
    assert parse_retry_after("Wed, 01 Jan 2025 11:00:00 GMT", now) == 0.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    policy = RetryPolicy(max_retries=5, base_delay=0.5, max_delay=4.0)
    assert [policy.delay(a) for a in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert policy.delay(0, retry_after=120.0) == 4.0  # a server's wish is capped too
    assert policy.delay(3, retry_after=1.5) == 1.5


def test_site_url_normalises_and_rejects() -> None:
    assert site_url("https://acme.atlassian.net/wiki/") == "https://acme.atlassian.net"
    with pytest.raises(ConnectorError):
        site_url("acme.atlassian.net")


# --------------------------------------------------------------------------- Confluence


def test_confluence_listing_follows_next_links(confluence: FakeConfluence) -> None:
    confluence.max_limit = 2  # 5 current pages: 3 requests
    with _conf_client(confluence) as client:
        assert client.space("ENG")["id"] == confluence.space_id
        pages = list(client.iter_space_pages(confluence.space_id))
    assert [p["id"] for p, _ in pages] == ["1", "2", "3", "4", "5"]  # trashed page left out
    assert all(base == confluence.base_url + "/wiki" for _, base in pages)
    assert all(p["body"] == {} for p, _ in pages)  # listing without bodies
    listing = confluence.calls("/wiki/api/v2/spaces/98304/pages")
    assert [r.query.get("cursor") for r in listing] == [None, "2", "4"]
    assert all(r.query["status"] == "current" for r in listing)


def test_confluence_bodies_in_batches_with_names(confluence: FakeConfluence) -> None:
    confluence.edit_page("2", '<p>Owner: <ac:link><ri:user ri:account-id="acc-2"/></ac:link></p>')
    source_known: dict[str, Document] = {}
    with _conf_client(confluence) as client:
        plan = ConfluenceSource(client, "ENG").plan(None, source_known)
        documents = {d.source_id: d for d in plan.documents}
    assert sorted(documents) == ["1", "2", "3", "4", "5"]
    assert "Grace Hopper" in documents["2"].content
    assert documents["2"].author == "Ada Lovelace"
    assert documents["2"].metadata["version"] == "2"
    assert documents["1"].url == confluence.base_url + "/wiki/spaces/ENG/pages/1/Page+1"
    [fetch] = confluence.calls("/wiki/api/v2/pages")
    assert fetch.query["body-format"] == "storage" and fetch.multi["id"] == ["1,2,3,4,5"]
    [users] = confluence.calls("/wiki/rest/api/user/bulk")
    assert users.multi["accountId"] == ["acc-1", "acc-2"]  # one parameter per account
    assert json.loads(plan.cursor)["space_id"] == confluence.space_id


def _stored(page_id: str, version: int, status: ProcessingStatus = ProcessingStatus.COMPLETED
            ) -> Document:
    return Document(id=f"d{page_id}", group_id="g", source_system=SourceSystem.CONFLUENCE,
                    source_id=page_id, title=f"Page {page_id}", content_hash="x",
                    processing_status=status,
                    metadata={"space_id": "98304", "version": str(version)})


def test_confluence_plan_fetches_only_new_and_changed_pages(confluence: FakeConfluence) -> None:
    confluence.edit_page("3", "<p>Edited.</p>")  # version 2
    known = {"1": _stored("1", 1), "2": _stored("2", 1, ProcessingStatus.FAILED),
             "3": _stored("3", 1), "9": _stored("9", 1), "77": _stored("77", 4)}
    known["elsewhere"] = known["1"].model_copy(update={"source_id": "elsewhere",
                                                       "metadata": {"space_id": "1"}})
    with _conf_client(confluence) as client:
        plan = ConfluenceSource(client, "ENG").plan(None, known)
        fetched = [d.source_id for d in plan.documents]
    assert fetched == ["2", "3", "4", "5"]  # 1 unchanged; 2 never completed; 3 edited
    assert plan.unchanged == 1
    assert sorted(plan.deleted) == ["77", "9"]  # purged, trashed; other spaces untouched


def test_confluence_429_retry_after_then_success(confluence: FakeConfluence) -> None:
    sleeps = Sleeps()
    confluence.failures += [("/wiki/api/v2/spaces", 429, {"Retry-After": "3"}),
                            ("/wiki/api/v2/spaces", 503, {}), ("/wiki/api/v2/spaces", 502, {})]
    with _conf_client(confluence, sleeps) as client:
        assert client.space("ENG")["key"] == "ENG"
    assert sleeps == [3.0, 2.0, 4.0]  # Retry-After honoured, then exponential backoff
    assert len(confluence.calls("/wiki/api/v2/spaces")) == 4


def test_confluence_gives_up_after_max_retries(confluence: FakeConfluence) -> None:
    sleeps = Sleeps()
    confluence.failures += [("/wiki/api/v2/spaces", 429, {"Retry-After": "600"})] * 4
    with _conf_client(confluence, sleeps) as client, pytest.raises(ConnectorError) as err:
        client.space("ENG")
    assert sleeps == [10.0, 10.0, 10.0]  # capped at max_delay, 3 retries
    assert "HTTP 429" in str(err.value) and "3 retries" in str(err.value)
    assert "\n" not in str(err.value)


def test_confluence_bad_credentials_and_unknown_space(confluence: FakeConfluence) -> None:
    client = ConfluenceClient(confluence.base_url, "wrong-token", email=confluence.email,
                              policy=FAST, sleep=Sleeps())
    with client, pytest.raises(ConnectorError) as err:
        client.space("ENG")
    message = str(err.value)
    assert "HTTP 401" in message and "wrong-token" not in message
    with _conf_client(confluence) as client, pytest.raises(ConnectorError, match="no space"):
        client.space("NOPE")


def test_unreachable_server_is_a_clear_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    sleeps = Sleeps()
    client = ConfluenceClient(f"http://127.0.0.1:{port}", "t", policy=FAST, sleep=sleeps)
    with client, pytest.raises(ConnectorError, match="cannot reach Confluence"):
        client.space("ENG")
    assert sleeps == [1.0, 2.0, 4.0]


# --------------------------------------------------------------------------- Slack


def _slack_client(api: FakeSlack, sleeps: Sleeps | None = None, token: str | None = None
                  ) -> SlackClient:
    return SlackClient(token or api.token, base_url=api.base_url + "/api", policy=FAST,
                       sleep=Sleeps() if sleeps is None else sleeps)


def test_slack_cursor_pagination(slack: FakeSlack) -> None:
    with _slack_client(slack) as client:
        assert [u["id"] for u in client.users()] == ["U1", "U2", "U3"]
        history = list(client.history("C1"))
    assert [m["ts"] for m in history] == ["1700000200.000100", "1700000100.000100",
                                          "1700000000.000100"]
    assert [r.query.get("cursor") for r in slack.calls("/api/users.list")] == [None, "2"]
    assert all(r.query["limit"] == "200" for r in slack.calls("/api/"))
    assert all(r.headers["authorization"] == "Bearer xoxb-test" for r in slack.requests)


def test_slack_errors_are_clear(slack: FakeSlack) -> None:
    with _slack_client(slack, token="xoxb-wrong") as client, pytest.raises(SlackApiError) as err:
        client.team_id()
    assert str(err.value) == "Slack auth.test failed: invalid_auth (the token is not valid)"
    with _slack_client(slack) as client, pytest.raises(SlackApiError, match="channel_not_found"):
        list(client.history("C404"))
    error = SlackApiError("conversations.list", "missing_scope", needed="groups:read")
    assert "lacks the groups:read scope" in str(error)


def test_slack_429_retry_after_then_success(slack: FakeSlack) -> None:
    sleeps = Sleeps()
    slack.failures.append(("/api/conversations.history", 429, {"Retry-After": "2"}))
    with _slack_client(slack, sleeps) as client:
        assert len(list(client.history("C1"))) == 3
    assert sleeps == [2.0]


def test_slack_source_renders_threads_with_real_names(slack: FakeSlack) -> None:
    with _slack_client(slack) as client:
        source = SlackSource(client)
        assert source.key == "slack:T0001"
        plan = source.plan(None, {})
        documents = {d.source_id: d for d in plan.documents}
    assert sorted(documents) == ["general/1700000000.000100", "general/1700000100.000100"]
    assert documents["general/1700000000.000100"].content == \
        "Alice Chen: Hello Bob Stone, see #random"
    thread = documents["general/1700000100.000100"]
    assert thread.content.splitlines() == ["Bob Stone: Deploy plan?",
                                           "Alice Chen: Tomorrow at 9.", "Carol Diaz: Ship it."]
    assert thread.metadata["thread_ts"] == "1700000100.000100"
    assert plan.skipped == 1  # the join
    assert json.loads(plan.cursor) == {"channels": {"C1": "1700000200.000100"}}
    assert not slack.calls("/api/conversations.history?channel=C2")  # not a member


def test_slack_channel_selection_errors(slack: FakeSlack) -> None:
    with _slack_client(slack) as client:
        with pytest.raises(ConnectorError, match="unknown Slack channel"):
            SlackSource(client, ["nope"]).plan(None, {})
        with pytest.raises(ConnectorError, match="not a member of #random"):
            SlackSource(client, ["#random"]).plan(None, {})
        plan = SlackSource(client, ["C1"]).plan(None, {})
        assert len(list(plan.documents)) == 2
