from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from skilldeck.skills.routing import tokenize as tokenize_module
from skilldeck.skills.routing.multilingual import looks_foreign, tokenize_query, translate
from skilldeck.skills.routing.tokenize import STOPWORDS, fold, stem, tokenize


def test_kebab_snake_and_dotted_names_keep_parts_and_joined_form() -> None:
    assert tokenize("gh-fix-ci") == ["gh", "fix", "ci", "ghfixci"]
    assert tokenize("pdf_tools") == ["pdf", "tool", "pdftool"]
    assert "nextj" in tokenize("next.js") and "next" in tokenize("next.js")


def test_camel_and_pascal_case_identifiers_are_split() -> None:
    assert tokenize("parseHTTPResponse") == ["pars", "http", "respons", "parsehttprespons"]
    tokens = tokenize("PostgreSQL")
    assert {"postgr", "sql", "postgresql"} <= set(tokens)
    assert tokenize("iOS") == ["ios"]


def test_digits_stay_with_their_word_and_split_from_it() -> None:
    assert tokenize("dotnet10") == ["dotnet", "10", "dotnet10"]
    assert tokenize("k8s") == ["k8s"]
    assert tokenize("404") == ["404"]
    assert "html5" in tokenize("HTML5")


def test_slash_joined_short_pieces_form_one_compound() -> None:
    assert "ab" in tokenize("an A/B test")
    assert {"ci", "cd", "cicd"} <= set(tokenize("CI/CD pipeline"))
    assert "srcskill" not in tokenize("src/skills/match.py")


def test_accents_are_folded() -> None:
    assert fold("Análisis Québec") == "Analisis Quebec"
    assert tokenize("análisis") == tokenize("analisis")
    assert fold("plain ascii") == "plain ascii"


def test_stopwords_of_several_languages_are_dropped() -> None:
    assert tokenize("the of and please I need a") == []
    assert tokenize("el la de para por favor") == []
    assert tokenize("der die das und bitte") == []
    assert "please" in STOPWORDS and "quiero" in STOPWORDS and "voce" in STOPWORDS


def test_light_stemming_conflates_inflections_only() -> None:
    assert {stem(w) for w in ("test", "tests", "testing", "tested")} == {"test"}
    assert stem("queries") == stem("query")
    assert stem("images") == stem("image")
    assert stem("running") == "run"
    assert stem("embeddings") == stem("embedding") == "embed"
    assert stem("classes") == "class"
    assert stem("analysis") == "analysis"  # not a plural
    assert stem("string") == "string"  # "str" has no vowel: not a real -ing
    assert stem("creation") != stem("create")  # derivations stay apart


def test_cjk_text_becomes_character_bigrams_without_function_characters() -> None:
    tokens = tokenize("帮我把这个PDF里的文字提取出来")
    assert "pdf" in tokens
    assert {"文字", "提取", "取出"} <= set(tokens)
    assert not any("的" in t or "我" in t for t in tokens)
    assert tokenize("表") == ["表"]


def test_cyrillic_and_other_scripts_stay_words() -> None:
    assert tokenize("Нужно сделать отчёт") == ["нужно", "сделать", "отчет"]
    assert tokenize("Ελληνικά κείμενο") == ["ελληνικα", "κειμενο"]


def test_contractions_do_not_leave_fragments() -> None:
    assert tokenize("don't it's user's data") == ["user", "data"]


def test_query_tokens_add_english_for_known_foreign_words() -> None:
    tokens = tokenize_query("Extraer el texto de una factura en PDF")
    assert {"extraer", "pdf", "extract", "text", "invoic"} <= set(tokens)
    assert {"spreadsheet", "summary"} <= set(
        tokenize_query("Ich möchte meine Rechnungen in einer Tabelle zusammenfassen")
    )
    assert {"extract", "text"} <= set(tokenize_query("帮我把PDF里的文字提取出来"))


def test_inflected_and_compound_foreign_words_are_found() -> None:
    assert "review" in tokenize_query("Revisa este contrato por favor")
    assert "vulnerability" in tokenize_query("Bitte prüfe meinen Code auf Sicherheitslücken")
    assert "fix" in tokenize_query("Preciso corrigir os testes que estão falhando")


def test_false_friends_are_not_translated() -> None:
    # "preciso" (I need) is a stopword, not "precio" (price)
    assert "pric" not in tokenize_query("Preciso corrigir os testes")


def test_english_queries_are_never_translated() -> None:
    assert not looks_foreign("make the red button bigger")
    assert translate("make the red button bigger") == []
    assert tokenize_query("make the red button bigger") == tokenize("make the red button bigger")
    assert looks_foreign("haz el botón rojo")
    assert looks_foreign("把按钮变大")


@given(st.text(max_size=300))
def test_tokens_are_lowercase_words_for_any_text(text: str) -> None:
    for token in tokenize_query(text):
        assert token
        assert not any(c.isspace() for c in token)
        assert token == token.lower()


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_the_ascii_pattern_matches_as_the_full_one_on_ascii_text(text: str) -> None:
    full = re.compile(tokenize_module._TOKEN_PATTERN)
    assert tokenize_module._ASCII_TOKEN_RE.findall(text) == full.findall(text)


def test_ascii_and_non_ascii_text_tokenise_alike_around_the_switch() -> None:
    assert (
        tokenize("PDF_tools and next.js, A/B tests")
        == tokenize("PDF_tools and next.js, A/B tests é")[
            : len(tokenize("PDF_tools and next.js, A/B tests"))
        ]
    )
    assert "表格" in "".join(tokenize("处理表格 spreadsheet"))


def test_a_piece_split_further_is_also_kept_whole() -> None:
    """A product name inside a compound ("-2chat-automation", "Auth0-admin") meets the
    same name written alone in a request."""
    assert "2chat" in tokenize("-2chat-automation")
    assert "2chat" in tokenize("send it through 2chat")
    assert "auth0" in tokenize("Auth0-admin")
    assert tokenize("gh-fix-ci") == ["gh", "fix", "ci", "ghfixci"]  # nothing split further
