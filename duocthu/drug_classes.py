"""Pharmacological class names by ATC prefix, as interaction sections name them.

An interaction section often names a class rather than each drug ("corticosteroid",
"thuốc chống viêm không steroid"), so the interaction path also looks for the other drug's
class names. Data only: adding a class is adding a row.
"""

from __future__ import annotations

from collections.abc import Iterable

from duocthu.lexicon import LEXICON

ATC_CLASS_NAMES: dict[str, tuple[str, ...]] = {
    "H02AB": ("corticosteroid", "glucocorticoid"),
    "J01MA": ("fluoroquinolon", "quinolon"),
    "M01A": ("thuốc chống viêm không steroid", "NSAID", "kháng viêm không steroid"),
    "N02BA": ("salicylat", "thuốc chống viêm không steroid", "NSAID"),
    "B01AA": ("thuốc kháng vitamin K", "thuốc chống đông"),
    "B01AB": ("thuốc chống đông",),
    "B01AC": ("thuốc chống kết tập tiểu cầu",),
    "C09A": ("thuốc ức chế enzym chuyển", "ức chế men chuyển"),
    "C09C": ("thuốc chẹn thụ thể angiotensin", "thuốc đối kháng thụ thể angiotensin II"),
    "C10AA": ("statin", "thuốc ức chế HMG-CoA reductase"),
    "C07A": ("thuốc chẹn beta", "chẹn beta"),
    "C08CA": ("thuốc chẹn kênh calci",),
    "C03C": ("thuốc lợi tiểu quai", "thuốc lợi tiểu"),
    "C03A": ("thiazid", "thuốc lợi tiểu"),
    "C03D": ("thuốc lợi tiểu giữ kali", "thuốc lợi tiểu"),
    "N05BA": ("benzodiazepin",),
    "N03A": ("thuốc chống động kinh",),
    "N06AB": ("thuốc ức chế tái hấp thu serotonin có chọn lọc", "SSRI"),
    "N02A": ("opioid", "thuốc giảm đau opioid"),
    "J01FA": ("macrolid",),
    "J01D": ("cephalosporin", "beta-lactam"),
    "J01CA": ("penicilin", "beta-lactam"),
    "J01GB": ("aminoglycosid",),
    "J01AA": ("tetracyclin",),
    "A02BC": ("thuốc ức chế bơm proton",),
    "A02BA": ("thuốc kháng histamin H2",),
    "R06A": ("thuốc kháng histamin",),
    "A10BB": ("sulfonylure",),
    "R03AC": ("thuốc chủ vận beta 2",),
}


def class_names(atc_codes: Iterable[str]) -> list[str]:
    names: list[str] = []
    for code in atc_codes:
        for prefix, labels in ATC_CLASS_NAMES.items():
            if code.upper().startswith(prefix):
                names.extend(label for label in labels if label not in names)
    return names


# Issue 24: classes as lexicon data (drug_class.<id>: names in any spelling; mapping drug_class_atc: members),
# shared by the book's contraindication records and the patient's past reactions. ATC_CLASS_NAMES above is
# the older table of the interaction path; folding it into the lexicon is left to the issue-24 change.
CLASS_NAMES: dict[str, tuple[str, ...]] = LEXICON.group("drug_class")
_ATC_PREFIXES: dict[str, tuple[str, ...]] = {
    class_id: tuple(p.strip() for p in prefixes.split(",") if p.strip())
    for class_id, prefixes in LEXICON.mapping("drug_class_atc").items()
}


def classes_of(atc_codes: Iterable[str]) -> frozenset[str]:
    """The class ids a drug with these ATC codes belongs to."""
    codes = [code.strip().upper() for code in atc_codes]
    return frozenset(class_id for class_id, prefixes in _ATC_PREFIXES.items()
                     if any(code.startswith(prefix) for code in codes for prefix in prefixes))


def classes_named(text: str) -> list[str]:
    """Class ids whose names occur in ``text`` (any spelling the lexicon lists), in lexicon order."""
    return [class_id for class_id in CLASS_NAMES if LEXICON.matches(f"drug_class.{class_id}", text)]
