"""hostrules: one spelling per host, for WebFetch domain rules and the fetch itself."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skilldeck.skills.rules import (
    canonical_host,
    canonical_url,
    domain_rule_matches,
    url_host,
)


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("127.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("[::ffff:127.0.0.1]", "127.0.0.1"),
        ("[::1]", "::1"),
        ("Example.COM.", "example.com"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("ｅｘａｍｐｌｅ.com", "example.com"),
        ("a..b", None),
        ("%65xample.com", None),
        ("evil.com\\", None),
        ("1.2.3.0x1g", "1.2.3.0x1g"),  # not a number: a name (as WHATWG reads it)
        ("foo.0x1", None),
        ("", None),
    ],
)
def test_canonical_host(raw: str, canonical: str | None) -> None:
    assert canonical_host(raw) == canonical


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_every_legacy_spelling_of_an_ipv4_address_is_one_host(value: int) -> None:
    dotted = str(ipaddress.IPv4Address(value))
    octets = dotted.split(".")
    spellings = [
        str(value),
        hex(value),
        ".".join(f"0{int(o):o}" for o in octets),
        ".".join(hex(int(o)) for o in octets),
        f"{octets[0]}.{int(octets[1]) << 16 | int(octets[2]) << 8 | int(octets[3])}",
        f"[::ffff:{dotted}]",
    ]
    for spelling in spellings:
        assert canonical_host(spelling) == dotted, spelling
        assert domain_rule_matches(dotted, f"http://{spelling}/x", deny=True)


def test_urls_parsers_disagree_about_are_refused() -> None:
    for url in (
        "http://evil.com\\@good.com/",
        "http://good.com@evil.com/",
        "http://user:pw@good.com/",
        "http://good.com /",
        "http://good.com\t/",
        "http://[::1%25eth0]/",
        "http://good.com:99999/",
    ):
        assert canonical_url(url) is None, url
        assert url_host(url) is None
        assert domain_rule_matches("good.com", url, deny=True)
        assert not domain_rule_matches("good.com", url, deny=False)


def test_domain_rules_cover_subdomains_of_names_not_of_addresses() -> None:
    assert domain_rule_matches("example.com", "https://API.Example.com./v1", deny=False)
    assert not domain_rule_matches("example.com", "https://example.com.evil.net/", deny=False)
    assert not domain_rule_matches("example.com", "https://notexample.com/", deny=False)
    assert not domain_rule_matches("0.0.1", "http://127.0.0.1/", deny=False)
    assert canonical_url("HTTP://Example.COM.:8080/a?b#c") == "http://example.com:8080/a?b#c"
