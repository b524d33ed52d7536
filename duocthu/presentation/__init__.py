"""What the Streamlit demo shows, as plain functions: the app stays a thin face over these.

Nothing here imports Streamlit. ``engine`` is the runtime the app caches; ``document`` lays a reply
out as a document with source cards and ``render`` turns it into escaped HTML; ``labels`` holds the
demo's words (badges, providers, knobs); ``research`` the research mode's view of a turn;
``formulary`` the browser; ``conversation`` the URL's conversation id and restoring its turns.
"""

from duocthu.presentation.conversation import (
    ReplyArchive,
    ShownTurn,
    new_conversation_id,
    restore_turns,
    turns_from_store,
    valid_conversation_id,
)
from duocthu.presentation.document import AnswerDocument, SourceCard, build_document
from duocthu.presentation.engine import PROGRESS_LABELS, Engine, load_runtime, open_engine
from duocthu.presentation.formulary import (
    BrowsedSection,
    DrugMatch,
    monograph_sections,
    products_by_component,
    record_rows,
    search_drugs,
    section_meta,
)
from duocthu.presentation.labels import (
    EXAMPLE_QUESTIONS,
    OFFLINE_PROVIDERS,
    OUTCOME_BADGES,
    POLICY_KNOBS,
    PROVIDER_HELP,
    PROVIDER_LABELS,
    SYSTEM_FAILURE_REASONS,
    Badge,
    Knob,
    available_providers,
    badge_for,
    knob_defaults,
    policy_from_knobs,
    provider_name,
)
from duocthu.presentation.pages import PageView, card_page
from duocthu.presentation.research import (
    MEMORY_TEXT,
    ROUTE_TEXT,
    RULE_WORDS,
    budget_rows,
    escape_markdown,
    evidence_rows,
    frame_rows,
    rule_words,
    score_meaning,
    trace_file_name,
    trace_json_bytes,
)

__all__ = [
    "EXAMPLE_QUESTIONS", "MEMORY_TEXT", "OFFLINE_PROVIDERS", "OUTCOME_BADGES", "POLICY_KNOBS", "PROGRESS_LABELS",
    "PROVIDER_HELP", "PROVIDER_LABELS", "ROUTE_TEXT", "RULE_WORDS", "SYSTEM_FAILURE_REASONS", "AnswerDocument",
    "Badge", "BrowsedSection", "PageView", "card_page", "DrugMatch", "Engine", "Knob", "ReplyArchive", "ShownTurn", "SourceCard",
    "available_providers", "badge_for", "budget_rows", "build_document", "escape_markdown", "evidence_rows",
    "frame_rows", "knob_defaults", "load_runtime", "monograph_sections", "record_rows", "new_conversation_id", "open_engine",
    "policy_from_knobs", "products_by_component", "provider_name", "restore_turns", "rule_words", "score_meaning",
    "search_drugs", "section_meta", "trace_file_name", "trace_json_bytes", "turns_from_store",
    "valid_conversation_id",
]
