"""The JSON mirrors of the shipped YAML files (``ibcalc/data/<name>.json``).

The built-in catalogue, cost parameters and NCCL release table are read on every estimate; each
ships with a JSON mirror of its data (what PyYAML reads from it) and the SHA-256 of the text it
was made from, which ``ibcalc.yamlio.shipped_data`` reads instead of the YAML, without PyYAML,
when the text is the one the mirror was made from, and never otherwise. This test holds every
mirror to its file: after editing ``data/links.yaml`` (or the other two), run

    python tests/test_shipped.py

which rewrites the mirrors (an estimate would otherwise read the YAML, correctly but slower).
The built-in catalogue has a second mirror, of its entries as validation makes them
(``ibcalc.catalogue.load.MODELS_MIRROR``), which the same command rewrites: each entry built
from it must be its validated twin.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ibcalc import yamlio
from ibcalc.catalogue import load as catalogue_load
from ibcalc.catalogue.load import MODELS_MIRROR, models_mirror_text
from ibcalc.yamlio import MIRRORED, mirror_text, safe_load, shipped_data

PACKAGE_DATA = Path(__file__).resolve().parent.parent / "src" / "ibcalc" / "data"


@pytest.mark.parametrize("name", MIRRORED)
def test_mirror_is_the_shipped_file_s_data(name: str) -> None:
    """The mirror is what its YAML gives now (rewrite it with ``python tests/test_shipped.py``),
    and the data read through it is the YAML's, types and key order included."""
    text = (PACKAGE_DATA / name).read_text(encoding="utf-8")
    mirror = (PACKAGE_DATA / f"{name}.json").read_text(encoding="utf-8")
    assert mirror == mirror_text(text), f"stale mirror of {name}: run python tests/test_shipped.py"
    assert repr(shipped_data(name, text)) == repr(safe_load(text))


@pytest.mark.parametrize("name", MIRRORED)
def test_mirror_is_read_only_for_its_own_text(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mirror is read for the text it was made from, and the YAML for any other text (an
    edited file is never read through an older mirror)."""
    text = (PACKAGE_DATA / name).read_text(encoding="utf-8")
    parsed: list[str] = []

    def counted(given: str) -> object:
        parsed.append(given)
        return safe_load(given)

    monkeypatch.setattr(yamlio, "safe_load", counted)
    assert repr(shipped_data(name, text)) == repr(safe_load(text))
    assert parsed == []
    edited = text + "\n# edited\n"
    assert repr(shipped_data(name, edited)) == repr(safe_load(text))
    assert parsed == [edited]
    changed = text.replace("schema:", "schema: ", 1)
    shipped_data(name, changed)
    assert parsed == [edited, changed]


def test_mirror_refuses_data_json_would_change() -> None:
    """A key that is not a string would come back from JSON as one: no mirror is made."""
    with pytest.raises(ValueError, match="JSON"):
        mirror_text("1: a\n")


def test_a_missing_mirror_reads_the_yaml() -> None:
    """No mirror for the name: the YAML is read."""
    assert shipped_data("no-such-file.yaml", "a: 1\n") == {"a": 1}


def test_an_estimate_reads_no_yaml() -> None:
    """An estimate on the built-in files reads their mirrors: PyYAML is not imported."""
    import subprocess

    code = (
        "import sys\n"
        "from ibcalc.cli import main\n"
        "try:\n"
        "    main(['allreduce', '--size', '10GB', '--fabric', 'ndr'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('yaml' in sys.modules, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.stderr.strip().splitlines()[-1] == "False", done.stderr


def _mirrors() -> list[tuple[Path, str]]:
    """Each mirror's path with the text it must hold."""
    made = []
    for name in MIRRORED:
        text = (PACKAGE_DATA / name).read_text(encoding="utf-8")
        made.append((PACKAGE_DATA / f"{name}.json", mirror_text(text)))
    catalogue = (PACKAGE_DATA / "links.yaml").read_text(encoding="utf-8")
    made.append((PACKAGE_DATA / MODELS_MIRROR, models_mirror_text(catalogue)))
    return made


def _rewrite() -> None:
    for target, mirror in _mirrors():
        json.loads(mirror)  # whole, before it replaces the old one
        if not target.exists() or target.read_text(encoding="utf-8") != mirror:
            temporary = target.with_suffix(".json.tmp")
            temporary.write_text(mirror, encoding="utf-8")
            temporary.replace(target)
            print(f"wrote {target}")


if __name__ == "__main__":
    _rewrite()


@pytest.mark.parametrize("mirror", [b"\xff\xfe not UTF-8", b'{"sha256":"', b""])
def test_a_damaged_mirror_reads_the_yaml(
    mirror: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mirror that is not UTF-8, cut short or empty is not data: the YAML is read (a mirror
    that was not UTF-8 had ended the run with an internal error, review ET 2)."""
    import importlib.resources

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.yaml.json").write_bytes(mirror)
    monkeypatch.setattr(importlib.resources, "files", lambda package: tmp_path)
    assert shipped_data("x.yaml", "a: 1\nb: [2.5, true]\n") == {"a": 1, "b": [2.5, True]}


def test_models_mirror_is_the_built_in_catalogue_validated() -> None:
    """The models' mirror is what validating data/links.yaml gives now (rewrite it with
    ``python tests/test_shipped.py``), and every entry built from it is its validated twin:
    equal, its fields in the same order and of the same types (a float, not an int; a tuple, not
    a list; an enumeration's member, not its value), the same fields counted as given, and the
    same JSON."""
    text = (PACKAGE_DATA / "links.yaml").read_text(encoding="utf-8")
    mirror = (PACKAGE_DATA / MODELS_MIRROR).read_text(encoding="utf-8")
    assert mirror == models_mirror_text(text), "stale mirror: run python tests/test_shipped.py"
    built = catalogue_load._mirrored(text)
    assert built is not None
    validated = catalogue_load._parse(yamlio.trusted_document("data/links.yaml", text))
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    for section in ("links", "systems", "storage"):
        entries, twins = getattr(built, section), getattr(validated, section)
        assert len(entries) == len(twins) > 0
        for entry, twin in zip(entries, twins, strict=True):
            assert entry == twin
            assert list(entry.__dict__) == list(twin.__dict__) == list(type(twin).model_fields)
            assert entry.model_fields_set == twin.model_fields_set
            assert entry.model_dump_json() == twin.model_dump_json()
            for name, value in entry.__dict__.items():
                assert type(value) is type(twin.__dict__[name]), (twin.id, name)
                if isinstance(value, tuple):  # and each member's (an enumeration's, a str)
                    kinds = [type(v) for v in twin.__dict__[name]]
                    assert [type(v) for v in value] == kinds, (twin.id, name)


def test_models_mirror_is_read_only_for_its_own_text() -> None:
    """An edited data/links.yaml is validated, not taken from a mirror made from another text."""
    text = (PACKAGE_DATA / "links.yaml").read_text(encoding="utf-8")
    assert catalogue_load._mirrored(text) is not None
    assert catalogue_load._mirrored(text + "\n# edited\n") is None


def test_a_mirrored_field_is_made_again_as_validation_makes_it() -> None:
    """JSON gives a tuple back as a list and an enumeration's member as its value: each is made
    again, inside ``X | None`` and inside a tuple too (an optional or tuple-of-enumeration field
    had come back as a str or a list of them: review EW 5, latent, no such field today)."""
    from ibcalc.catalogue.models import Confidence

    make = catalogue_load._maker
    assert make(Confidence)("high") is Confidence.HIGH
    assert make(Confidence | None)("high") is Confidence.HIGH
    assert make(tuple[Confidence, ...])(["high", "low"]) == (Confidence.HIGH, Confidence.LOW)
    assert type(make(tuple[Confidence, ...] | None)(["low"])[0]) is Confidence
    assert make(tuple[str, ...])(["a"]) == ("a",)
    assert make(str) is None
    assert make(float | None) is None


def test_a_models_mirror_of_another_shape_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A models mirror with the right digest but entries of another shape (edited by hand) is
    no mirror: the YAML is validated instead, where it had ended every command with KeyError."""
    text = (PACKAGE_DATA / "links.yaml").read_text(encoding="utf-8")
    mirrored = yamlio.read_mirror(MODELS_MIRROR, text)
    assert mirrored is not None
    (data,) = mirrored
    for broken in ({**data, "links": [[{"id": "x"}, []]]}, {**data, "links": 3}, {}):
        monkeypatch.setattr(catalogue_load, "read_mirror", lambda *_, b=broken: (b,))
        assert catalogue_load._mirrored(text) is None
