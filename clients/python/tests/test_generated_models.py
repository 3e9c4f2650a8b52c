"""The committed models.py is exactly what the pinned generator makes from the checked-in
schema: a protocol change without regenerating the models fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
COMMITTED = PACKAGE / "src" / "openturn_client" / "models.py"


def test_committed_models_match_the_schema(tmp_path):
    generated = tmp_path / "models.py"
    # The options live in pyproject.toml ([tool.datamodel-codegen]); only the output moves.
    subprocess.run(
        [sys.executable, "-m", "datamodel_code_generator", "--output", str(generated)],
        cwd=PACKAGE,
        check=True,
        capture_output=True,
    )
    assert generated.read_text() == COMMITTED.read_text(), (
        "src/openturn_client/models.py is stale: run scripts/regenerate-clients (or `datamodel-codegen` in clients/python) and commit it"
    )
