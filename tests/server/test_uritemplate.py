"""RFC 6570 URI templates: expansion of every level, safe matching, round trips."""

from __future__ import annotations

import random
import string
import time
from collections.abc import Callable
from typing import Any

import pytest

from mcpkit._server._uritemplate import MAX_URI_LENGTH, UriTemplate

# The variables of RFC 6570's example tables (sections 1.2 and 3.2).
RFC_VALUES: dict[str, Any] = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

LEVEL1 = [
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
]
LEVEL2 = [
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
]
LEVEL3 = [
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
]
LEVEL4 = [
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]
# Section 3.2's per-operator tables (those not already above).
SECTION3 = [
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,empty}", "1024,"),
    ("{x,undef}", "1024"),
    ("{undef,y}", "768"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?undef}", ""),
    ("{?empty_keys}", ""),
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&var:3}", "&var=val"),
]


@pytest.mark.parametrize(("template", "expected"), LEVEL1 + LEVEL2 + LEVEL3 + LEVEL4 + SECTION3)
def test_rfc6570_examples(template: str, expected: str) -> None:
    assert UriTemplate(template).expand(RFC_VALUES) == expected


def test_variables_and_is_template() -> None:
    t = UriTemplate("repo://{owner}/{repo}/issues{?state,page}{&owner}")
    assert t.variables == ("owner", "repo", "state", "page")
    assert t.is_template
    plain = UriTemplate("config://app/settings")
    assert plain.variables == ()
    assert not plain.is_template
    assert plain.expand({}) == "config://app/settings"
    assert plain.match("config://app/settings") == {}
    assert plain.match("config://app/settings2") is None
    assert UriTemplate("{/list*,path:4}").variables == ("list", "path")
    assert str(t) == t.template and repr(plain) == "UriTemplate('config://app/settings')"
    assert (
        UriTemplate("a{b}") == UriTemplate("a{b}")
        and len({UriTemplate("a"), UriTemplate("a")}) == 1
    )


def test_expand_value_types() -> None:
    t = UriTemplate("x{?i,f,b,t,l}")
    assert (
        t.expand(i=3, f=1.5, b=False, t=(1, "a b"), l=[None, "z"])
        == "x?i=3&f=1.5&b=false&t=1,a%20b&l=z"
    )
    assert t.expand({"i": 1}, f=2) == "x?i=1&f=2"
    assert UriTemplate("{x}").expand({"x": "é☃"}) == "%C3%A9%E2%98%83"
    assert UriTemplate("{+x}").expand({"x": "%41%zz"}) == "%41%25zz"
    assert UriTemplate("{+x:2}").expand({"x": "%41bc"}) == "%41b"
    assert UriTemplate("{x:2}").expand({"x": "%41bc"}) == "%254"
    assert UriTemplate("{x:2}").expand({"x": "é☃x"}) == "%C3%A9%E2%98%83"
    with pytest.raises(ValueError, match="prefix"):
        UriTemplate("{x:2}").expand({"x": ["a"]})
    with pytest.raises(TypeError, match="cannot expand a object"):
        UriTemplate("{x}").expand({"x": object()})


def test_literals_outside_uri_syntax_are_encoded() -> None:
    t = UriTemplate("a b/{x}|é")
    assert t.expand(x="1") == "a%20b/1%7C%C3%A9"
    assert t.match("a%20b/1%7C%C3%A9") == {"x": "1"}


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("{", "unclosed"),
        ("a{b", "unclosed"),
        ("a}b", "without"),
        ("{a}}", "without"),
        ("{a{b}}", "inside an expression"),
        ("{}", "empty expression"),
        ("{=a}", "reserved"),
        ("{,a}", "reserved"),
        ("{!a}", "reserved"),
        ("{@a}", "reserved"),
        ("{|a}", "reserved"),
        ("{$a}", "unknown operator"),
        ("{-a}", "unknown operator"),
        ("{a b}", "bad variable"),
        ("{a,}", "bad variable"),
        ("{a.}", "bad variable"),
        ("{.a..b}", "bad variable"),
        ("{a:0}", "bad variable"),
        ("{a:10000}", "bad variable"),
        ("{a:x}", "bad variable"),
        ("{a**}", "bad variable"),
        ("{a*:3}", "bad variable"),
        ("{a%2}", "bad variable"),
        ("a\x00{b}", "control character"),
    ],
)
def test_malformed_templates_rejected(template: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        UriTemplate(template)


def test_template_length_and_type_bounded() -> None:
    with pytest.raises(ValueError, match="longer than"):
        UriTemplate("a" * 9000)
    with pytest.raises(TypeError):
        UriTemplate(b"{x}")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- matching


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("users://{id}", "users://42", {"id": "42"}),
        ("users://{id}/profile", "users://a%20b/profile", {"id": "a b"}),
        ("users://{id}", "users://", None),
        ("users://{id}", "users://42/x", None),
        ("mail://{addr}", "mail://a@b.example", {"addr": "a@b.example"}),
        ("file:///{+path}", "file:///docs/a/b.md", {"path": "docs/a/b.md"}),
        ("file:///{+path}", "file:///", None),
        ("{+path}/edit", "a/b/edit", {"path": "a/b"}),
        ("{+path}{?q}", "a/b?q=1", {"path": "a/b", "q": "1"}),
        ("{+path}{?q}", "a/b", {"path": "a/b"}),
        ("{name}.{ext}", "archive.tar.gz", {"name": "archive.tar", "ext": "gz"}),
        ("{a}.{b}.txt", "x.y.z.txt", {"a": "x.y", "b": "z"}),
        ("{a}{b}", "xyz", {"a": "xy", "b": "z"}),
        ("{+path}/meta{?q}", "a/meta/b/meta?q=1", {"path": "a/meta/b", "q": "1"}),
        ("{+a}/{+b}", "x/y/z", {"a": "x/y", "b": "z"}),
        ("{a}-{b}", "x-y-z", {"a": "x-y", "b": "z"}),
        ("{?a%20b}", "?a%20b=1", {"a%20b": "1"}),
        ("x{.ext}", "x.tar.gz", {"ext": "tar.gz"}),
        ("x{.ext}", "x", {}),
        ("{/a,b}", "/1/2", {"a": "1", "b": "2"}),
        ("{/a,b}", "/1", {"a": "1"}),
        ("{/a,b}", "/1/2/3", None),
        ("/items{/id}", "/items", {}),
        ("/items{/id}", "/items/7", {"id": "7"}),
        ("{/list*}", "/red/green/blue", {"list": ["red", "green", "blue"]}),
        ("{/list*}/end", "/a/b/end", {"list": ["a", "b"]}),
        ("{/a,rest*}", "/1/2/3", {"a": "1", "rest": ["2", "3"]}),
        ("{list*}", "a,b", {"list": ["a", "b"]}),
        ("{x,y}", "1,2", {"x": "1", "y": "2"}),
        ("{x,y}", "1,2,3", {"x": "1", "y": "2,3"}),
        ("{;x,y}", ";y=2;x=1", {"x": "1", "y": "2"}),
        ("{;x,y}", ";x", {"x": ""}),
        ("{;x}", ";z=1", None),
        ("{#frag}", "#a/b", {"frag": "a/b"}),
        ("page{#frag}", "page", {}),
        ("{var:3}", "val", {"var": "val"}),
        ("{var:3}", "valu", None),
        ("{?q:2}", "?q=abc", None),
        ("{x}", "%C3%A9", {"x": "é"}),
        ("{x}", "é", {"x": "é"}),
        ("{x}", "%C3", None),
        ("{x}", "a%ZZ", None),
        ("{x}", "a%2", None),
        ("{x}", "a b", None),
        ("{x}-{x}", "1-1", {"x": "1"}),
        ("{x}-{x}", "1-2", None),
        ("a{b}c", "abc", {"b": "b"}),
        ("a{b}c", "ac", None),
        ("a{b}c", "Xbc", None),
    ],
)
def test_match(template: str, uri: str, expected: dict[str, Any] | None) -> None:
    assert UriTemplate(template).match(uri) == expected


def test_query_forms() -> None:
    t = UriTemplate("repo://{owner}/{repo}/issues{?state,page}")
    assert t.match("repo://o/r/issues") == {"owner": "o", "repo": "r"}
    assert t.match("repo://o/r/issues?page=2&state=open") == {
        "owner": "o",
        "repo": "r",
        "state": "open",
        "page": "2",
    }
    # Result in template order, whatever the URI's order.
    assert list(t.match("repo://o/r/issues?page=2&state=open") or {}) == [
        "owner",
        "repo",
        "state",
        "page",
    ]
    assert t.match("repo://o/r/issues?utm=x&state=&page") == {
        "owner": "o",
        "repo": "r",
        "state": "",
        "page": "",
    }
    assert t.match("repo://o/r/issues?state=a&state=b") is None  # ambiguous
    assert t.match("repo://o/r/issues?state=a%26b") == {"owner": "o", "repo": "r", "state": "a&b"}
    assert t.match("repo://o/r/issues?url=http://x/y&state=s")["state"] == "s"  # type: ignore[index]
    cont = UriTemplate("search{?q}{&lang,tag*}")
    assert cont.match("search?tag=a&lang=en&q=hi&tag=b") == {
        "q": "hi",
        "lang": "en",
        "tag": ["a", "b"],
    }
    fixed = UriTemplate("search?fixed=yes{&q}")
    assert fixed.match("search?fixed=yes&q=1") == {"q": "1"}
    assert fixed.match("search?fixed=yes") == {}
    assert fixed.match("search?fixed=no&q=1") is None


# --------------------------------------------------------------------------- safety

TRAVERSALS = [
    "..",
    ".%2e",
    "%2e%2e",
    "%2E%2E",
    "..%2F",
    "..%2f",
    "%2e%2e%2f",
    "..%5C",
    "a%2Fb",
    "a%2fb",
    "a%5Cb",
    "%2F",
    "a%00",
    "%00",
    "a%0Ab",
    "a%0D%0Ab",
    "a%1Fb",
    "a%7Fb",
    "a%C2%85b",
    "%2e%2e%2fetc%2fpasswd",
]


@pytest.mark.parametrize("value", TRAVERSALS)
def test_simple_expressions_refuse_traversal(value: str) -> None:
    for template, make in [
        ("files/{name}", lambda v: f"files/{v}"),
        ("files/{name}.txt", lambda v: f"files/{v}.txt"),
        ("files{/name}", lambda v: f"files/{v}"),
        ("files{/parts*}", lambda v: f"files/a/{v}/b"),
        ("files{;name}", lambda v: f"files;name={v}"),
        ("files/x{.ext}", lambda v: f"files/x.{v}"),
    ]:
        assert UriTemplate(template).match(make(value)) is None, (template, value)


def test_raw_slashes_never_cross_a_simple_segment() -> None:
    t = UriTemplate("files/{name}")
    assert t.match("files/a/b") is None
    assert t.match("files/../etc/passwd") is None
    assert t.match("files/a\\b") is None
    assert UriTemplate("{a}/{b}").match("x/y/z") is None


@pytest.mark.parametrize(
    "uri",
    [
        "file:///../etc/passwd",
        "file:///a/../../etc/passwd",
        "file:///a/..",
        "file:///a/%2e%2e/b",
        "file:///a/..%2Fb",
        "file:///a%2F..%2Fb",
        "file:///..%5Cwindows",
        "file:///a%00.txt",
        "file:///a%0A",
    ],
)
def test_reserved_expressions_refuse_traversal_unless_opted_in(uri: str) -> None:
    assert UriTemplate("file:///{+path}").match(uri) is None
    opted = UriTemplate("file:///{+path}", allow_reserved=True).match(uri)
    assert opted is not None and "path" in opted


def test_reserved_expressions_allow_slashes_and_dots_in_names() -> None:
    t = UriTemplate("file:///{+path}")
    assert t.match("file:///a/b/..c/d..e/.hidden/x.tar.gz") == {
        "path": "a/b/..c/d..e/.hidden/x.tar.gz"
    }
    assert t.match("file:///a%2Fb") == {"path": "a/b"}


def test_query_values_refuse_traversal_and_controls_but_allow_urls() -> None:
    t = UriTemplate("fetch{?url}")
    assert t.match("fetch?url=https%3A%2F%2Fexample.com%2Fa") == {"url": "https://example.com/a"}
    assert t.match("fetch?url=..%2Fsecret") is None
    assert t.match("fetch?url=a%00") is None


def test_length_bound() -> None:
    t = UriTemplate("{+path}")
    assert t.match("a" * MAX_URI_LENGTH) == {"path": "a" * MAX_URI_LENGTH}
    assert t.match("a" * (MAX_URI_LENGTH + 1)) is None
    assert t.match(None) is None  # type: ignore[arg-type]


ADVERSARIAL: list[tuple[str, Callable[[int], str]]] = [
    ("{a}-{b}-{c}x", lambda n: "-" * n),
    ("{a}.{b}.{c}.{d}!", lambda n: "." * n),
    ("{+a}/{+b}/{+c}/end", lambda n: "/" * n),
    ("{+a},{+b},{+c}", lambda n: "," * n + "#"),
    ("{/a*}{/b*}x", lambda n: "/" * n),
    ("{/a,b,c}", lambda n: "/" * n),
    ("{?a,b,c}", lambda n: "?" + "&" * n),
    ("{?a*}", lambda n: "?" + "a=&" * (n // 3)),
    ("{;a,b}", lambda n: ";" * n),
    ("{.a}{.b}{.c}", lambda n: "." * n),
    ("x{a}x{b}x{c}x{d}y", lambda n: "x" * n),
    ("{a}%{b}", lambda n: "%25" * (n // 3)),
    ("{#a}", lambda n: "#" + "%" * n),
]


@pytest.mark.parametrize(("template", "make"), ADVERSARIAL)
def test_adversarial_uris_match_fast(template: str, make: Callable[[int], str]) -> None:
    t = UriTemplate(template)
    for uri in (make(100_000), make(MAX_URI_LENGTH - 2), make(MAX_URI_LENGTH // 2)):
        start = time.perf_counter()
        t.match(uri)
        assert time.perf_counter() - start < 0.5, (template, len(uri))


# --------------------------------------------------------------------------- round trips

_SAFE_CHARS = string.ascii_letters + string.digits + "-._~" + ":?#[]@!$&'()*+,;=" + ' %"<>^`{|}'
_UNICODE = "é☃😀ß\u00a0"


def _text(rng: random.Random, *, exclude: str = "", min_len: int = 0, max_len: int = 8) -> str:
    alphabet = [c for c in _SAFE_CHARS + _UNICODE + "/\\" if c not in exclude]
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(rng.randint(min_len, max_len)))
        segments = value.replace("\\", "/").split("/")
        if ".." not in segments:
            return value


def _maybe(rng: random.Random, value: Any) -> Any:
    return value if rng.random() < 0.7 else None


# template, value generator. Values must stay clear of what the template cannot give back
# unambiguously (documented limits): "/" and "\" in non-reserved path expressions, "%" and "#"
# in reserved ones, empty values where an expression has no leading operator character.
PATH = "/\\"
ROUND_TRIPS: list[tuple[str, Callable[[random.Random], dict[str, Any]]]] = [
    ("users://{id}", lambda r: {"id": _text(r, exclude=PATH, min_len=1)}),
    (
        "repo://{owner}/{repo}/issues{?state,page}",
        lambda r: {
            "owner": _text(r, exclude=PATH, min_len=1),
            "repo": _text(r, exclude=PATH, min_len=1),
            "state": _maybe(r, _text(r)),
            "page": _maybe(r, str(r.randint(0, 999))),
        },
    ),
    ("file:///{+path}", lambda r: {"path": _text(r, exclude="%#\\", min_len=1)}),
    (
        "tree://{/segments*}",
        lambda r: {"segments": [_text(r, exclude=PATH, min_len=0) for _ in range(r.randint(1, 4))]},
    ),
    (
        "/search{?q,tag*}",
        lambda r: {
            "q": _maybe(r, _text(r, exclude=PATH)),
            "tag": [_text(r, exclude=PATH) for _ in range(r.randint(1, 3))],
        },
    ),
    ("m{;x,y}", lambda r: {"x": _text(r, exclude=PATH), "y": _maybe(r, _text(r, exclude=PATH))}),
    ("x{.ext}", lambda r: {"ext": _text(r, exclude=PATH)}),
    ("doc{#section}", lambda r: {"section": _text(r, exclude="%\\")}),
    (
        "mcp://{a}/{b}.json",
        lambda r: {"a": _text(r, exclude=PATH, min_len=1), "b": _text(r, exclude=PATH, min_len=1)},
    ),
    (
        "p{/a,b}",
        lambda r: {"a": _text(r, exclude=PATH), "b": _text(r, exclude=PATH)},
    ),
    (
        "q{?x}{&y}",
        lambda r: {"x": _maybe(r, _text(r)), "y": _maybe(r, _text(r))},
    ),
    ("{var:3}", lambda r: {"var": _text(r, exclude=PATH, min_len=1, max_len=3)}),
    ("{x,y}", lambda r: {"x": _text(r, exclude=PATH), "y": _text(r, exclude=PATH, min_len=1)}),
    # Greedy splits: the first variable may hold the separator, the last one may not.
    (
        "{a}.{b}",
        lambda r: {
            "a": _text(r, exclude=PATH, min_len=1),
            "b": _text(r, exclude=PATH + ".", min_len=1),
        },
    ),
    (
        "{+a}/x/{b}",
        lambda r: {
            "a": _text(r, exclude="%#\\", min_len=1),
            "b": _text(r, exclude=PATH, min_len=1),
        },
    ),
    (
        "api://{version}/items{/id}{?fields*}",
        lambda r: {
            "version": "v" + str(r.randint(1, 9)),
            "id": _maybe(r, _text(r, exclude=PATH, min_len=1)),
            "fields": [_text(r, exclude=PATH) for _ in range(r.randint(0, 3))],
        },
    ),
]


@pytest.mark.parametrize(("template", "gen"), ROUND_TRIPS, ids=[t for t, _ in ROUND_TRIPS])
def test_round_trip(template: str, gen: Callable[[random.Random], dict[str, Any]]) -> None:
    t = UriTemplate(template)
    rng = random.Random(template)
    for _ in range(300):
        values = gen(rng)
        uri = t.expand(values)
        expected = {k: v for k, v in values.items() if v is not None and v != []}
        assert t.match(uri) == expected, (values, uri)


def test_expansion_output_is_always_a_valid_uri_string() -> None:
    allowed = set(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")
    rng = random.Random(6570)
    templates = [UriTemplate(t) for t, _ in ROUND_TRIPS] + [UriTemplate(t) for t, _ in LEVEL4]
    for _ in range(200):
        value = _text(rng)
        for t in templates:
            uri = t.expand(dict.fromkeys(t.variables, value))
            assert set(uri) <= allowed, (t, value, uri)
