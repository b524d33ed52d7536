"""From the frame's patient facts to the safety screen's profile: the phrases the book may use for each.

A condition brings its forms from the lexicon (and those of its severe forms, so "suy thận" is
shown "suy thận nặng" sentences without being declared contraindicated by them); a medicine being
taken brings its names, brands and pharmacological classes ("thuốc chống đông" for warfarin).
"""

from __future__ import annotations

from duocthu.drug_classes import class_names, classes_of
from duocthu.lexicon import LEXICON
from duocthu.retrieval.safety import AllergyTerm, ConditionTerm, MedicationTerm, PatientProfile
from duocthu.understanding.conditions import ConditionLexicon
from duocthu.understanding.drugs import DrugResolver
from duocthu.understanding.frame import PatientFacts, Population, QueryFrame

SEVERE_RENAL = "suy thận nặng"


def medication_term(drug_id: str, resolver: DrugResolver) -> MedicationTerm:
    entry = resolver.catalogue.get(drug_id)
    names = resolver.names_of(drug_id) + (class_names(entry.atc_codes) if entry else [])
    return MedicationTerm(resolver.display_name(drug_id), tuple(dict.fromkeys(names)), drug_id)


def allergy_term(name: str, resolver: DrugResolver) -> AllergyTerm:
    """A drug of the book brings its names and classes; another name ("penicillin") is looked up as typed."""
    if name in resolver.catalogue:
        term = medication_term(name, resolver)
        return AllergyTerm(term.label, term.phrases, name)
    return AllergyTerm(name, (name,))


def condition_term(label: str, lexicon: ConditionLexicon) -> ConditionTerm:
    condition = lexicon.get(label)
    if condition is None:
        return ConditionTerm(label, (label,))
    narrower = tuple(form for c in lexicon.narrower_of(condition) for form in c.forms)
    # A severe or specific form has the broader condition too: "hen phế quản nặng" matches "Hen phế quản".
    broader = lexicon.broader_of(condition) or _without_severity(condition.label, lexicon)
    phrases = condition.forms + (broader.forms if broader else ())
    return ConditionTerm(label, tuple(dict.fromkeys(phrases)), narrower, severe=condition.broader is not None,
                         clearance_below=condition.clearance_below)


SEVERITY_WORDS = LEXICON.phrases("profile.severity_words")


def _without_severity(label: str, lexicon: ConditionLexicon):  # -> Condition | None
    """"hen phế quản nặng" (a phrase of the book, with no reviewed broader form) → "hen phế quản"."""
    for word in sorted(SEVERITY_WORDS, key=len, reverse=True):
        if label.endswith(" " + word):
            found = lexicon.find(label[: -len(word) - 1])
            return found[0].condition if found else None
    return None


def patient_profile(frame: QueryFrame, lexicon: ConditionLexicon, resolver: DrugResolver) -> PatientProfile:
    patient = frame.patient
    labels = list(patient.conditions)
    clearance = patient.renal_clearance_ml_min
    severe_renal = lexicon.get(SEVERE_RENAL)
    if clearance is not None and severe_renal is not None and severe_renal.clearance_below is not None \
            and clearance < severe_renal.clearance_below and SEVERE_RENAL not in labels:
        labels.append(SEVERE_RENAL)
    medications = [medication_term(d, resolver) for d in patient.current_medications]
    # A medicine not in the book is looked for by its names and class ("Xarelto" → rivaroxaban, "thuốc
    # chống đông"); one named anywhere in the conversation ("ngày nào cũng uống rifampicin") is screened
    # too, without claiming it is being taken.
    medications += [MedicationTerm(name, tuple(resolver.other_drug_terms([name]))) for name in patient.other_medications]
    medications += [MedicationTerm(name, tuple(resolver.other_drug_terms([name])), taken=False)
                    for name in frame.unknown_drugs if name not in patient.other_medications]
    return PatientProfile(
        age_years=frame.age_years, age_text=frame.age_text, weight_kg=frame.weight_kg,
        pediatric=frame.population is Population.PEDIATRIC, elderly=frame.population is Population.ELDERLY,
        pregnant=patient.pregnant, trimester=patient.trimester, breastfeeding=patient.breastfeeding,
        conditions=tuple(condition_term(label, lexicon) for label in dict.fromkeys(labels)),
        medications=tuple(medications), renal_clearance_ml_min=clearance,
        allergies=tuple(allergy_term(name, resolver) for name in patient.allergies), route=frame.route,
        typed=_the_patients_own(frame), classes_by_drug={d: classes_of(e.atc_codes) for d, e in resolver.catalogue.items()},
    )


def _the_patients_own(frame: QueryFrame) -> PatientFacts:
    """The typed facts judged against the drug's records: a baby's birth facts are not those of an adult patient
    ("con em sinh non 34 tuần … em bị cao huyết áp": the mother takes the drug, the preterm baby is nursed)."""
    patient = frame.patient
    adult = frame.population in (Population.ADULT, Population.ELDERLY) or (frame.age_years or 0) >= 1
    if adult and (patient.preterm is not None or patient.jaundice is not None or patient.gestation_weeks is not None):
        return patient.model_copy(update={"preterm": None, "jaundice": None, "gestation_weeks": None})
    return patient
