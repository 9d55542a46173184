"""The tenant decision: every name a request carries, one answer, refusals as HTTP errors."""

from __future__ import annotations

import pytest
from fastapi import HTTPException

from knotwork.services.api.tenancy import Named, _body_names, decide


@pytest.mark.parametrize(("body", "names", "malformed"), [
    (b'{"query": "x"}', (), False),
    (b'{"group_id": "beta"}', ("beta",), False),
    (b'{"group\\u005fid": "beta"}', ("beta",), False),  # escaped key: same key once parsed
    (b'{"group_id": "alpha", "group_id": "beta"}', ("alpha", "beta"), False),  # both kept
    (b'{"inner": {"group_id": "beta"}}', (), False),  # only the top level names the tenant
    (b'{"group_id": ["beta"]}', (), True),
    (b'{"group_id": null}', (), False),
    (b'[{"group_id": "beta"}]', (), False),
    (b'not json', (), False),
    ('{"group_id": "beta"}'.encode("utf-16"), ("beta",), False),  # json reads UTF-16 too
])
def test_body_names(body: bytes, names: tuple[str, ...], malformed: bool) -> None:
    assert _body_names(body) == Named(names, malformed)


def test_a_bound_key_gets_its_tenant_and_may_only_name_it() -> None:
    assert decide("alpha", Named(), "default") == "alpha"
    assert decide("alpha", Named(("alpha", "alpha")), "default") == "alpha"
    for named in (Named(("beta",)), Named(("alpha", "beta")), Named((), malformed=True)):
        with pytest.raises(HTTPException) as refused:
            decide("alpha", named, "default")
        assert refused.value.status_code == 403


def test_an_unbound_request_gets_the_one_tenant_it_names_or_the_default() -> None:
    assert decide(None, Named(), "default") == "default"
    assert decide(None, Named(("beta", "beta")), "default") == "beta"
    with pytest.raises(HTTPException) as two:
        decide(None, Named(("alpha", "beta")), "default")
    assert two.value.status_code == 403
    with pytest.raises(HTTPException) as bad:
        decide(None, Named(("no spaces allowed",)), "default")
    assert bad.value.status_code == 422
