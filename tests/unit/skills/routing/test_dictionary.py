"""Packaged bilingual dictionaries for non-English requests
(:mod:`skilldeck.skills.routing.multilingual`): FreeDict (dictd files) and CC-CEDICT
are read from small files written here, in the real formats; compiled once into a
SQLite table under the cache folder; looked up only for non-English requests; absent
data falls back to the hand-written lexicon."""

from __future__ import annotations

import gzip
import re
import sqlite3
import struct
import zlib
from collections.abc import Iterator, Mapping
from contextlib import closing
from pathlib import Path

import pytest

import skilldeck.skills.routing.match as match_mod
import skilldeck.skills.routing.multilingual.dictionary as dictionary_mod
import skilldeck.skills.routing.multilingual.entries as entries_mod
import skilldeck.skills.routing.multilingual.sources as sources_mod
import skilldeck.skills.routing.multilingual.tables as tables_mod
from skilldeck.config import load_settings
from skilldeck.skills.registry import SkillRegistry
from skilldeck.skills.routing import SkillMatcher, warm_rank
from skilldeck.skills.routing.multilingual import (
    BilingualDictionary,
    Sources,
    english_tokens,
    find_sources,
    tokenize_query,
)
from skilldeck.skills.routing.tokenize import STOPWORDS

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

#: (headword, entry), as FreeDict's dictd conversion writes them: the index is lower
#: case, and a headword with several meanings has one entry per meaning
GERMAN = [
    (
        "rechnung",
        "Rechnung /rˈɛçnʊŋ/ <fem, n, sg>\n [econ.] invoice <n>, bill\n   Synonym: {Faktura}\n"
        '      "offene Rechnung"  - unpaid invoice\n',
    ),
    ("wetter", "Wetter /vˈɛtɜ/ <pl, n>\n [min.] mine atmosphere <n>, mine air <n>\n"),
    ("wetter", 'Wetter /vˈɛtɜ/ <neut, n, sg>\nweather <n>\n      "bei diesem Wetter"  - in this\n'),
    ("kündigung", "Kündigung /kˈʏndɪɡʊŋ/ <fem, n, sg>\n1. cancellation\n2. dismissal\n"),
    ("rate", "Rate /ʁˈaːtə/ <fem, n, sg>\nrate\n"),
]
CEDICT = (
    "# CC-CEDICT\n"
    "天氣 天气 [tian1 qi4] /weather/\n"
    "發票 发票 [fa1 piao4] /invoice/receipt or bill for purchase/\n"
    "CL:張 CL:张 [x] /CL:classifier/\n"
)


def b64(value: int) -> str:
    digits = ""
    while True:
        digits = _B64[value % 64] + digits
        value //= 64
        if not value:
            return digits


def write_freedict(folder: Path, lang: str, entries: list[tuple[str, str]]) -> None:
    """A dictd dictionary: a gzip'ed text and an index of base-64 offsets."""
    folder.mkdir(parents=True, exist_ok=True)
    blob = b""
    index = ["00databaseshort\tA\tB"]
    for head, body in entries:
        data = body.encode()
        index.append(f"{head}\t{b64(len(blob))}\t{b64(len(data))}")
        blob += data
    (folder / f"freedict-{lang}-eng.dict.dz").write_bytes(gzip.compress(blob))
    (folder / f"freedict-{lang}-eng.index").write_text("\n".join(index) + "\n", "utf-8")


@pytest.fixture
def dict_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "dictd"
    write_freedict(folder, "deu", GERMAN)
    (folder / "cedict_test.txt.gz").write_bytes(gzip.compress(CEDICT.encode()))
    return folder


def lemmas(lang: str) -> Mapping[str, str] | None:
    return {"Rechnungen": "Rechnung", "Wetters": "Wetter"} if lang == "deu" else None


@pytest.fixture
def sources(dict_dir: Path) -> Sources:
    found = find_sources([dict_dir])
    return Sources(found.freedict, found.cedict, lemmas)


def read_freedict(index: Path, data: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(headword, English tokens) of every entry of a dictd dictionary."""
    text = entries_mod.DictText(data)
    for line in index.read_text(encoding="utf-8").splitlines():
        head, *row = line.split("\t")
        tokens = (
            ()
            if head.startswith("00database")
            else entries_mod.freedict_tokens(text, " ".join(row))
        )
        if tokens:
            yield head, tokens


def compile_entries(sources: Sources) -> dict[str, tuple[str, ...]]:
    """Every term the sources translate, as the dictionary answers it (the whole table)."""
    words, terms = BilingualDictionary(None, sources), set[str]()
    for name in sources.files():
        for table in ("t0",) if name == "cedict" else ("t0", "t1"):
            terms.update(t for (t,) in words._source(name).execute(f"SELECT term FROM {table}"))
    return {term: found for term in sorted(terms) if (found := words.get(term))}


def test_reads_dictd_entries_first_senses_without_markup(dict_dir: Path) -> None:
    index, data = dict_dir / "freedict-deu-eng.index", dict_dir / "freedict-deu-eng.dict.dz"
    pairs = list(read_freedict(index, data))
    # no "econ", "faktura", phonetics, nor the German words of a usage example
    assert pairs[0] == ("rechnung", ("invoic", "bill"))
    assert ("kündigung", ("cancellation", "dismissal")) in pairs
    assert [tokens for head, tokens in pairs if head == "wetter"] == [
        ("min", "atmospher", "air"),
        ("weather",),
    ]
    assert all(head != "00databaseshort" for head, _ in pairs)


def test_compiles_headwords_inflections_and_cedict(sources: Sources) -> None:
    entries = compile_entries(sources)
    assert entries["rechnung"] == ("invoic", "bill")
    assert entries["rechnungen"] == ("invoic", "bill")  # from the lemma table
    assert entries["kundigung"] == ("cancellation", "dismissal")  # accent-folded key
    # every meaning of a headword is kept, first senses first
    assert entries["wetter"] == ("min", "weather", "atmospher", "air")
    assert entries["发票"] == entries["發票"] == ("invoic", "receipt", "bill", "purchas")
    assert "张" not in entries and "張" not in entries  # classifier lines skipped


def test_translates_words_compounds_and_cjk(sources: Sources, tmp_path: Path) -> None:
    words = BilingualDictionary(tmp_path / "cache", sources)
    assert words.translate("meine rechnungen") == ["invoic", "bill"]
    # a compound outside the dictionary: its longest known head and tail
    assert words.translate("die kundigungsrate senken") == ["cancellation", "dismissal", "rat"]
    assert words.translate("明天的天气和发票") == [
        "weather",
        "invoic",
        "receipt",
        "bill",
        "purchas",
    ]


def test_compiled_once_into_the_cache_folder_then_read(
    sources: Sources, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    BilingualDictionary(cache, sources).translate("wetter")
    tables = sorted(p.name.rsplit("-", 1)[1] for p in cache.glob("dictionary-*.sqlite"))
    assert tables == ["cedict.sqlite", "deu.sqlite"]  # one per source; entries stay unparsed
    (german,) = cache.glob("dictionary-*-deu.sqlite")
    with closing(sqlite3.connect(german)) as db:
        assert db.execute("SELECT v FROM t1 WHERE term = 'rechnungen'").fetchone() == ("rechnung",)

    def no_compile(_: Sources, name: str) -> list[dict[str, list[str]]]:
        raise AssertionError(f"compiled {name} again")

    monkeypatch.setattr(tables_mod, "_build", no_compile)
    assert BilingualDictionary(cache, sources).translate("wetter") == [
        "min",
        "weather",
        "atmospher",
        "air",
    ]


def test_no_dictionary_installed_falls_back_to_the_lexicon(tmp_path: Path) -> None:
    empty = BilingualDictionary(tmp_path / "cache", Sources({}, None, None))
    assert empty.translate("die rechnung") is None
    tokens = tokenize_query("Ich möchte meine Rechnungen zusammenfassen", empty)
    assert "invoic" in tokens  # the hand-written lexicon's translation
    assert not list((tmp_path / "cache").glob("*"))


def test_dictionary_replaces_the_lexicon_when_installed(sources: Sources, tmp_path: Path) -> None:
    words = BilingualDictionary(tmp_path / "cache", sources)
    tokens = tokenize_query("Wie wird das Wetter morgen", words)
    assert "weather" in tokens
    # the lexicon's own "spreadsheet" for "tabelle" is not added: the dictionary rules
    assert "spreadsheet" not in tokenize_query("Ich brauche eine Tabelle", words)


class Exploding:
    def translate(self, folded_lower: str) -> list[str] | None:
        raise AssertionError("the dictionary was consulted for an English request")


def test_english_requests_never_open_the_dictionary() -> None:
    text = "extract the tables from this pdf invoice"
    assert tokenize_query(text, Exploding()) == tokenize_query(text)


def test_environment_selects_or_disables_the_dictionaries(
    dict_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_DICTIONARIES", str(dict_dir))
    found = find_sources()
    assert set(found.freedict) == {"deu"} and found.cedict is not None
    monkeypatch.setenv("SKILLDECK_DICTIONARIES", "none")
    assert not find_sources()


def test_registry_matcher_and_warm_rank_use_the_dictionary(
    dict_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLDECK_DICTIONARIES", str(dict_dir))
    monkeypatch.setattr(sources_mod, "_simplemma_tables", lemmas)
    dictionary_mod.dictionary_for.cache_clear()
    match_mod._MATCHER_MEMO.clear()
    root = tmp_path / "skills"
    for name, description in {
        "weather-report": "Forecasts for a city, temperature and rain.",
        "invoice-maker": "Create a PDF invoice for a customer.",
        "git-commit": "Write commit messages for staged changes.",
    }.items():
        (root / name).mkdir(parents=True)
        text = f"---\nname: {name}\ndescription: {description} {name}\n---\n\nBody.\n"
        (root / name / "SKILL.md").write_text(text, "utf-8")
    settings = load_settings(home=tmp_path / "home", workspace=tmp_path)
    registry = SkillRegistry.discover(settings, roots=[root], no_defaults=True)
    matcher = SkillMatcher.for_registry(registry)
    query = "Wie wird das Wetter morgen in Hamburg?"
    (best,) = matcher.rank(query, k=1)
    assert best.name == "weather-report"
    warm = warm_rank(registry, query, k=3)
    assert warm is not None
    assert [(m.name, m.score) for m in warm] == [(m.name, m.score) for m in matcher.rank(query)]
    assert list((settings.cache_dir / "routing").glob("dictionary-*.sqlite"))


# ---- the lazy tables answer as the old full compile did ------------------------------
#: the compile this module replaced (every entry parsed, every form folded), kept as the
#: reference: each term must get the same English tokens from the new lookups


def old_compile(sources: Sources) -> dict[str, tuple[str, ...]]:
    key = tables_mod.key
    entries: dict[str, tuple[str, ...]] = {}
    for lang, (index, data) in sorted(sources.freedict.items()):
        text = gzip.decompress(data.read_bytes())
        homographs: dict[str, list[tuple[str, ...]]] = {}
        for line in index.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) < 3 or parts[0].startswith("00database"):
                continue
            start, length = (int.from_bytes(b64_bytes(p), "big") for p in parts[1:3])
            entry = text[start : start + length].decode("utf-8", "replace")
            tokens = english_tokens(old_senses(entry))
            if tokens and (k := key(parts[0])) and k not in STOPWORDS:
                homographs.setdefault(k, []).append(tokens)
        heads = {k: entries_mod.interleave(v) for k, v in homographs.items()}
        for k, tokens in heads.items():
            entries.setdefault(k, tokens)
        for form, lemma in ((sources.lemmas(lang) if sources.lemmas else None) or {}).items():
            if targets := heads.get(key(lemma)):
                entries.setdefault(key(form), targets)
    if sources.cedict is not None:
        for line in gzip.decompress(sources.cedict.read_bytes()).decode().splitlines(True):
            head, _, rest = line.partition(" [")
            senses = [
                re.sub(entries_mod.PATTERNS["noise"], " ", s)
                for s in rest.partition("] /")[2].split("/")
                if s.strip() and not s.startswith(("CL:", "see ", "variant of", "surname"))
            ]
            tokens, words = english_tokens(senses), head.split()
            if tokens and len(words) == 2 and not line.startswith("#"):
                for word in dict.fromkeys(words):
                    entries.setdefault(key(word), tokens)
    return entries


def b64_bytes(text: str) -> bytes:
    value = 0
    for char in text:
        value = value * 64 + _B64.index(char)
    return value.to_bytes(8, "big")


def old_senses(entry: str) -> list[str]:
    senses: list[str] = []
    for line in entry.split("\n")[1:]:
        stripped = line.strip()
        if not stripped or stripped.startswith(entries_mod.SKIP_LINE) or stripped[0] in '("':
            continue
        stripped = re.sub(r"^\s*\d+\.\s*", "", stripped)
        stripped = re.sub(entries_mod.PATTERNS["noise"], " ", stripped)
        senses.extend(s.strip() for s in re.split(r"[;,]", stripped) if s.strip())
    return senses


def dictzip(data: bytes, chunk: int = 64) -> bytes:
    """``data`` as dictzip writes it: gzip whose extra field lists independently
    inflatable chunks (``RA``), so that an entry is read without the rest."""
    pieces = [data[i : i + chunk] for i in range(0, len(data), chunk)]
    packed = []
    for i, piece in enumerate(pieces):
        deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
        last = i == len(pieces) - 1
        packed.append(
            deflate.compress(piece) + deflate.flush(zlib.Z_FINISH if last else zlib.Z_FULL_FLUSH)
        )
    field = struct.pack(f"<3H{len(packed)}H", 1, chunk, len(packed), *map(len, packed))
    extra = b"RA" + struct.pack("<H", len(field)) + field
    header = b"\x1f\x8b\x08\x0c\0\0\0\0\x02\x03" + struct.pack("<H", len(extra)) + extra
    trailer = struct.pack("<II", zlib.crc32(data), len(data))
    return header + b"name.dict\0" + b"".join(packed) + trailer


FRENCH = [
    ("rate", "rate /ʁat/\nspleen\n"),  # also a German headword: German (first) wins
    ("facture", "facture\ninvoice, bill\n"),
    ("vide", "vide\nNote: nothing to translate\n"),  # no tokens: not a headword
    ("kündigung", "Kündigung\nnotice\n"),  # German first
    ("übersetzen", "übersetzen\ntranslate\n"),
    ("uber", "uber\nudder\n"),
    ("le", "le\nthe\n"),  # a stopword
]


def french_lemmas(lang: str) -> Mapping[str, str] | None:
    if lang == "deu":
        return {
            "Rechnungen": "Rechnung",
            "Wetters": "Wetter",
            "Raten": "Rate",
            "kundigungen": "Kündigung",
        }
    return {
        "factures": "facture",
        "Facturé": "nothing",  # folds to "facture": a headword already
        "vides": "vide",  # lemma without tokens: no entry
        "Übersetzt": "übersetzen",
        "ubersetzt": "uber",  # same folded key: the first form in table order wins
        "lés": "le",  # a stopword lemma is no headword
    }


def test_lookups_equal_the_full_compile(tmp_path: Path) -> None:
    folder = tmp_path / "dictd"
    write_freedict(folder, "deu", GERMAN)
    write_freedict(folder, "fra", FRENCH)
    blob = (folder / "freedict-fra-eng.dict.dz").read_bytes()
    (folder / "freedict-fra-eng.dict.dz").write_bytes(dictzip(gzip.decompress(blob), 16))
    cedict = CEDICT + "發票 发票 [x] /CL:張/\n天氣 天气 [x] /climate/\n"
    (folder / "cedict_test.txt.gz").write_bytes(gzip.compress(cedict.encode()))
    found = find_sources([folder])
    sources = Sources(found.freedict, found.cedict, french_lemmas)
    expected = old_compile(sources)
    assert expected["facture"] == ("invoic", "bill") and expected["rate"] == ("rat",)
    assert compile_entries(sources) == expected
    words = BilingualDictionary(tmp_path / "cache", sources)
    for term in [*expected, "vide", "vides", "le", "les", "nothing", "pdf", ""]:
        assert words.get(term) == expected.get(term, ()), term


def test_dictzip_chunks_read_alone(tmp_path: Path) -> None:
    data = "".join(body for _, body in GERMAN).encode()
    path = tmp_path / "x.dict.dz"
    path.write_bytes(dictzip(data, 16))
    assert gzip.decompress(path.read_bytes()) == data  # a valid gzip file too
    text = entries_mod.DictText(path)
    assert text._offsets and not text._text
    assert text.entry(30, 40) == data[30:70].decode()
    assert len(text._chunks) == 4  # only the chunks of bytes 30-69


@pytest.mark.skipif(
    not Path("/usr/share/dictd/freedict-ita-eng.index").is_file(), reason="no dict-freedict-ita-eng"
)
def test_installed_dictionary_answers_as_the_full_compile(tmp_path: Path) -> None:
    installed = find_sources([Path("/usr/share/dictd")])
    sources = Sources({"ita": installed.freedict["ita"]}, None, installed.lemmas)
    assert compile_entries(sources) == old_compile(sources)
