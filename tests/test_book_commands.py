"""``duocthu book build|page`` and ``duocthu import-pdf`` as a user runs them (subprocesses)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import FIXTURE_FORMULARY, ROOT

PDF_FIXTURES = ROOT / "tests" / "fixtures" / "pdf"


def run(args, env):
    return subprocess.run([sys.executable, "-m", "duocthu", *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=300)


@pytest.fixture()
def env(tmp_path):
    environment = {**os.environ, "DUOCTHU_HOME": str(tmp_path / "home"), "DUOCTHU_FORMULARY": str(FIXTURE_FORMULARY)}
    environment.pop("DUOCTHU_BOOK_PDF", None)
    return environment


def test_book_build_to_the_default_path_then_page(env, tmp_path):
    built = run(["book", "build"], env)
    assert built.returncode == 0, built.stderr
    pdf = tmp_path / "home" / "book" / "duoc-thu-demo.pdf"
    assert pdf.exists() and f"built {pdf}" in built.stdout
    page = run(["book", "page", "2", "--box", "56,100,300,200"], env)
    assert page.returncode == 0, page.stderr
    png = page.stdout.strip()
    assert png.startswith(str(tmp_path / "home" / "book" / "pages")) and png.endswith(".png")


def test_check_pages_fails_with_a_clear_message(env, tmp_path):
    checked = run(["book", "build", "--out", str(tmp_path / "b.pdf"), "--check-pages"], env)
    assert checked.returncode == 1
    assert "stale pages: run `duocthu book build --update-pages`" in checked.stderr


def test_import_pdf_prints_the_report(env, tmp_path):
    done = run(["import-pdf", str(PDF_FIXTURES / "split_heading.pdf"), "--out", str(tmp_path / "out")], env)
    assert done.returncode == 1  # something to look at: an unknown heading
    assert "wrote 2 monographs" in done.stdout and "unknown headings" in done.stdout
    assert "import-pdf" in done.stderr  # the progress bar
    clean = run(["import-pdf", str(PDF_FIXTURES / "two_column.pdf"), "--out", str(tmp_path / "out2")], env)
    assert clean.returncode == 0 and "nothing needs a person's attention" in clean.stdout


def test_import_pdf_of_an_encrypted_file(env, tmp_path):
    done = run(["import-pdf", str(PDF_FIXTURES / "encrypted.pdf"), "--out", str(tmp_path / "out")], env)
    assert done.returncode == 2 and "encrypted" in done.stderr and not (tmp_path / "out").exists()
