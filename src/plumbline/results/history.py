"""The `history` kind: a results store's history (`plumbline history`); not stored itself."""

from __future__ import annotations

from plumbline.results.history_document import HistoryDocument
from plumbline.results.kinds import ResultKind, result_kind


@result_kind("history")
class History(ResultKind[HistoryDocument]):
    """A history document."""

    model = HistoryDocument
    made_by = "plumbline history --store URL --json history.json"
