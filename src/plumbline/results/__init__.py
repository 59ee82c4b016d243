"""The results layer: one table of result kinds, between the jobs and what is shared.

Every kind of result plumbline makes or reads (a leaderboard, an A/B comparison, a reliability
report, an agent run, a store's history) is declared once, in `kinds.KIND_TABLE`, and defined in
one module of this package with `@result_kind`: its document model, how a file of that kind is
read (older versions upgraded, validated, checked), its subjects, its stored metrics and which
record files feed it. `store/`, `views/` and `app/` reach the job packages through here.

    from plumbline.results.kinds import detect, kind
    name = detect(json_value)              # "compare", or None
    report = kind(name).read(json_value)   # the typed document; ResultDocumentError otherwise
"""
