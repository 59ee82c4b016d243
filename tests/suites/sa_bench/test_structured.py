"""Table-driven tests of the Mermaid, PlantUML and JSON architecture validators."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plumbline.suites.sa_bench.scorers.mermaid import (
    install_mermaid_parser,
    mermaid_parse_many,
    mermaid_parser,
    validate_mermaid,
)
from plumbline.suites.sa_bench.scorers.plantuml import plantuml_command, validate_plantuml
from plumbline.suites.sa_bench.scorers.structured import (
    extract_diagram,
    validate_diagram,
    validate_json_architecture,
)

MERMAID_VALID = [
    "flowchart LR\n  A[Client] --> B[API]",
    "graph TD\n  A[Client] --> B[API]\n  B --> C[(Database)]",
    "%%{init: {'theme': 'dark'}}%%\nflowchart LR\n  A[Client] --> B[API]",
    "%%{\n  init: {'theme': 'forest'}\n}%%\ngraph LR\n  A[Client] --> B[API]",
    "flowchart LR\n  %% the entry point\n  A[Client] --> B[API]\n%% closing comment",
    "---\ntitle: Uploads\n---\nflowchart LR\n  A[Client] --> B[API]",
    "flowchart LR\n  A([User]) -->|HTTPS| B{{Edge}} -.-> C[(DB)]",
    'flowchart LR\n  A["Lambda (resize)"] --> B["S3 [images]"]',
    "flowchart TB\n  A[Client] -- invokes --> B[API]\n  B == writes ==> C[(Store)]",
    "flowchart LR\n  A[A] & B[B] --> C[C]",
    "flowchart LR\n  subgraph vpc [VPC]\n    direction TB\n"
    "    A[App] --> B[(DB)]\n  end\n  U[User] --> A",
    "flowchart LR\n  A[Client] --> B[API]\n  classDef aws fill:#f90\n"
    "  class A,B aws\n  style A fill:#fff",
    "flowchart LR; A[Client] --> B[API]; B --> C[Queue]",
    "flowchart LR\n  A((Start)) --> B>Flag] --> C[/In/] --> D[\\Out\\]",
    "sequenceDiagram\n  participant C as Client\n  participant A as API\n"
    "  C->>A: POST /upload\n  A-->>C: 202",
    "sequenceDiagram\n  Client->>API: request\n  loop retries\n    API->>Queue: send\n  end",
    "architecture-beta\n  group api(cloud)[API]\n  service db(database)[Database] in api\n"
    "  service server(server)[Server] in api\n  db:L -- R:server",
    "graph LR\n  A --> B\n  B --> C",
]

MERMAID_INVALID = [
    ("", "empty"),
    ("flowchart LR\n  A[Client)", "closed or interrupted"),
    ("flowchart LR\n  A[Client] --> B(API]", "closed or interrupted"),
    ("flowchart LR\n  A{Client] --> B[API]", "closed or interrupted"),
    ("flowchart LR\n  A[Client --> B[API]", "closed or interrupted"),
    ("flowchart LR\n  A[Client] --> B[API", "never closed"),
    ("flowchart LR\n  A[Client] -->", "must point to a node"),
    ("flowchart LR\n  A[Client] --> B[API]\n  B --> Lamda", "unknown node 'Lamda'"),
    ("flowchart LR\n  A[Client]\n  B[API]", "at least one edge"),
    ("flowchart LR\n  A[Client] --> B[API]\n  subgraph x [X]\n  C[C] --> A", "never closed"),
    ("flowchart LR\n  A[Client] --> B[API]\n  end", "without an open subgraph"),
    ("flowchart XY\n  A[Client] --> B[API]", "bad header"),
    ('pie title Pets\n  "Dogs" : 3', "unsupported"),
    ("%%{init: {'theme': 'dark'}\nflowchart LR\n  A[Client] --> B[API]", "never closed"),
    ("flowchart LR\n  A[Client] --> B[API]\n  class Z aws", "unknown node 'Z'"),
    ("flowchart LR\n  A[Client] ->> B[API]", "expected an arrow"),
    ('flowchart LR\n  A["Client] --> B[API]', "unterminated"),
    ("sequenceDiagram\n  participant C as Client\n  C->>X: hello", "undeclared participant"),
    ("flowchart LR\n  A[Client] --> B[API] %% no trailing comments", "expected an arrow"),
    ("sequenceDiagram\n  A->>B: hi\n  loop forever\n  A->>B: again", "never closed"),
    ("architecture-beta\n  service db(database)[DB]\n  db:L -- R:web", "unknown service"),
]


@pytest.mark.parametrize("source", MERMAID_VALID)
def test_valid_mermaid(source: str) -> None:
    result = validate_mermaid(source, use_mermaid=False)
    assert result.valid, result.errors
    assert result.validator == "plumbline-mermaid"
    assert len(result.nodes) >= 2 and result.edges


@pytest.mark.parametrize(("source", "problem"), MERMAID_INVALID)
def test_invalid_mermaid(source: str, problem: str) -> None:
    result = validate_mermaid(source, use_mermaid=False)
    assert not result.valid
    assert any(problem in error for error in result.errors), result.errors


# Cases our validator rejects for structure (Mermaid itself accepts them): stricter on purpose.
MERMAID_STRUCTURAL = ("unknown node", "at least", "unsupported", "undeclared participant")


@pytest.fixture(scope="module")
def real_mermaid() -> Path:
    """The real Mermaid parser (npm `mermaid` under Node.js), installed on first use."""
    directory = mermaid_parser()
    if directory is None:
        directory = install_mermaid_parser()
    assert mermaid_parser() == directory
    return directory


def test_the_real_mermaid_parser_agrees_on_syntax(real_mermaid: Path) -> None:
    sources = MERMAID_VALID + [source for source, _ in MERMAID_INVALID]
    verdicts = mermaid_parse_many(real_mermaid, sources)
    assert verdicts is not None
    for source, errors in zip(MERMAID_VALID, verdicts, strict=False):
        assert errors == [], (source, errors)
    invalid_verdicts = verdicts[len(MERMAID_VALID) :]
    for (source, problem), errors in zip(MERMAID_INVALID, invalid_verdicts, strict=True):
        # Mermaid accepts what is only structurally wrong; every syntax error it rejects too
        structural = any(marker in problem for marker in MERMAID_STRUCTURAL)
        assert (errors == []) is structural, (source, problem, errors)


def test_the_real_mermaid_parser_decides_when_installed(real_mermaid: Path) -> None:
    good = validate_mermaid(MERMAID_VALID[2])
    assert good.valid and good.validator == "mermaid+plumbline"
    bad = validate_mermaid("flowchart LR\n  A[Client) --> B[API]")
    assert not bad.valid and bad.errors[0].startswith("mermaid: Parse error on line 2")
    dangling = validate_mermaid("flowchart LR\n  A[Client] --> B[API]\n  B --> Lamda")
    assert not dangling.valid and dangling.validator == "mermaid+plumbline"
    assert any("unknown node 'Lamda'" in e for e in dangling.errors)


PUML_VALID = [
    '@startuml\ncomponent "API" as api\ndatabase "DB" as db\napi --> db : reads\n@enduml',
    "@startuml\nactor User\nnode Web\nUser -> Web\n@enduml",
    "@startuml\n[Web App] --> [Database]\n@enduml",
    "@startuml\n[Web App] as web\n[Cache] as cache\nweb ..> cache : lookups\n@enduml",
    "@startuml\n' a comment\ncomponent A\ncomponent B\nA -right-> B\n@enduml",
    "@startuml\n/' block\ncomment '/\ncomponent A\ncomponent B\nA --> B\n@enduml",
    "@startuml diagram-name\ntitle Uploads\nskinparam monochrome true\n"
    "cloud AWS {\n  component Lambda\n  database DynamoDB\n}\nLambda --> DynamoDB\n@enduml",
    "@startuml\nleft to right direction\nqueue SQS\ncomponent Worker\n"
    "SQS --> Worker : poll\n@enduml",
    '@startuml\ncomponent api as "API Gateway"\ncomponent fn as "Lambda"\napi --> fn\n@enduml',
    "@startuml\ncomponent A\ncomponent B\nA --> B\nnote right of A\n"
    "  entry point\nend note\n@enduml",
    '@startuml\nrectangle "Front" as f <<edge>>\nstorage "Bucket" as b #orange\nf --> b\n@enduml',
    '@startuml\nSystem(web, "Web", "frontend")\nSystemDb(db, "DB", "store")\n'
    'Rel(web, db, "reads")\n@enduml',
    "@startuml\n!theme plain\ncomponent A\ncomponent B\nA <--> B\n@enduml",
    "@startuml\npackage VPC {\n  node App\n  database RDS\n}\nApp -[#red]-> RDS\n@enduml",
    "@startuml\nactor Client\nparticipant API\nClient -> API : POST\nAPI --> Client : 201\n@enduml",
    "\n\n@startuml\ncomponent A\ncomponent B\nA --> B : calls\n@enduml\n",
]

PUML_INVALID = [
    ("component A\ncomponent B\nA --> B", "one '@startuml'"),
    ("@startuml\ncomponent A\ncomponent B\nA --> B", "one '@startuml'"),
    ("@startuml\ncomponent A\n@enduml\n@startuml\ncomponent B\n@enduml", "one '@startuml'"),
    ("@startuml\ncomponent A\ncomponent B\n@enduml", "at least one edge"),
    ("@startuml\ncomponent A\nA --> Missing\n@enduml", "unknown element 'Missing'"),
    ("@startuml\n@enduml", "at least two nodes"),
    ("@startuml\npackage VPC {\n  node App\n  node B\nApp --> B\n@enduml", "never closed"),
    ("@startuml\ncomponent A\ncomponent B\nA --> B\n}\n@enduml", "without an open"),
    ("@startuml\ncomponent A\ncomponent B\nA --> B\n@enduml\ntrailing text", "outside"),
    ("@startuml\ncomponent A\ncomponent B\nA --> B\nthis is not plantuml ((\n@enduml", "parse"),
    ("@startuml\ncomponent A\ncomponent B\nnote left of A\nA --> B\n@enduml", "never closed"),
    ('@startuml\nSystem(web, "Web")\nRel(web)\n@enduml', "needs two element ids"),
    ('@startuml\nSystem(web, "Web")\nSystem(db, "DB")\nRel(web, dbx)\n@enduml', "unknown"),
    ("@startuml\ncomponent A\ncomponent B\nA -> -> B\n@enduml", "parse"),
    ("@startuml\ncomponent A\ncomponent B\nA --> B :\n[Broken\n@enduml", "parse"),
    ('@startuml\nSystem("Web")\nSystem(db)\nRel(db, db)\n@enduml', "element id first"),
]


@pytest.mark.parametrize("source", PUML_VALID)
def test_valid_plantuml(source: str) -> None:
    result = validate_plantuml(source, use_plantuml=False)
    assert result.valid, result.errors
    assert result.validator == "plumbline-plantuml"


@pytest.mark.parametrize(("source", "problem"), PUML_INVALID)
def test_invalid_plantuml(source: str, problem: str) -> None:
    result = validate_plantuml(source, use_plantuml=False)
    assert not result.valid
    assert any(problem in error for error in result.errors), result.errors


@pytest.fixture
def real_plantuml() -> str:
    command = plantuml_command()
    assert command is not None, "install the Debian package 'plantuml' (.ci/run does)"
    return command


@pytest.mark.usefixtures("real_plantuml")
def test_plantuml_itself_decides_the_syntax_when_installed() -> None:
    good = validate_plantuml(PUML_VALID[0])
    assert good.valid and good.validator == "plantuml+plumbline"
    bad = validate_plantuml("@startuml\ncomponent A\ncomponent B\nA --> ( :\nfoo ((\n@enduml")
    assert not bad.valid and bad.validator == "plantuml+plumbline"
    assert any(e.startswith("line 4: plantuml:") for e in bad.errors), bad.errors
    # syntax PlantUML accepts, structure we do not: an arrow to an undeclared element
    dangling = validate_plantuml("@startuml\ncomponent A\ncomponent B\nA --> C\n@enduml")
    assert not dangling.valid and any("unknown element 'C'" in e for e in dangling.errors)


def _arch(components: Any = None, relationships: Any = None, **extra: Any) -> str:
    body: dict[str, Any] = {
        "components": components
        if components is not None
        else [{"id": "api", "type": "api_gateway"}, {"id": "fn", "type": "lambda"}],
        "relationships": relationships
        if relationships is not None
        else [{"from": "api", "to": "fn"}],
        **extra,
    }
    return json.dumps({"architecture": body})


TWO = [{"id": "api", "type": "api_gateway"}, {"id": "fn", "type": "lambda"}]
JSON_VALID = [
    _arch(),
    _arch(name="x", description="y"),
    _arch(components=[*TWO, {"id": "db", "type": "dynamodb", "name": "Amazon DynamoDB"}]),
    _arch(relationships=[{"from": "api", "to": "fn", "type": "invokes", "label": "sync"}]),
    _arch(relationships=[{"from": "fn", "to": "api"}, {"from": "api", "to": "fn"}]),
    _arch(components=[{**TWO[0], "service": "Amazon API Gateway"}, TWO[1]]),
    _arch(components=[{**TWO[0], "properties": {"stage": "prod"}}, TWO[1]]),
    _arch(groups=[{"id": "vpc", "members": ["api", "fn"]}]),
    _arch(components=[{**TWO[0], "group": "edge"}, TWO[1]], groups=[{"id": "edge"}]),
    _arch(
        components=[{"id": "a.b", "type": "x"}, {"id": "c-d", "type": "y"}],
        relationships=[{"from": "a.b", "to": "c-d"}],
    ),
    _arch(
        components=[{"id": "a:1", "type": "x"}, {"id": "_b", "type": "y"}],
        relationships=[{"from": "a:1", "to": "_b"}],
    ),
    _arch(relationships=[{"from": "api", "to": "fn", "description": "forwards requests"}]),
    _arch(components=[{**TWO[0], "extra": True}, TWO[1]]),
    _arch(
        components=[*TWO, {"id": "q", "type": "sqs"}],
        relationships=[{"from": "api", "to": "fn"}, {"from": "fn", "to": "q"}],
    ),
    _arch(relationships=[{"from": "fn", "to": "fn"}, {"from": "api", "to": "fn"}]),
    _arch(groups=[{"id": "g", "name": "Group", "type": "vpc"}]),
]

JSON_INVALID = [
    ("not json", "invalid JSON"),
    ("[]", "is not of type 'object'"),
    (json.dumps({"components": []}), "'architecture' is a required property"),
    (json.dumps({"architecture": {"components": TWO}}), "'relationships' is a required"),
    (_arch(components=[TWO[0]]), "is too short"),
    (_arch(relationships=[]), "should be non-empty"),
    (_arch(components=[{"id": "api"}, TWO[1]]), "'type' is a required property"),
    (_arch(components=[{"type": "x"}, TWO[1]]), "'id' is a required property"),
    (_arch(components=[{"id": "1bad", "type": "x"}, TWO[1]]), "does not match"),
    (_arch(components=[{"id": "api", "type": ""}, TWO[1]]), "should be non-empty"),
    (_arch(relationships=[{"from": "api"}]), "'to' is a required property"),
    (_arch(relationships=[{"from": "api", "to": "db"}]), "unknown component id 'db'"),
    (_arch(components=[TWO[0], {"id": "api", "type": "x"}]), "duplicate id 'api'"),
    (_arch(groups=[{"id": "vpc", "members": ["api", "ghost"]}]), "unknown component 'ghost'"),
    (_arch(components=[{**TWO[0], "group": "nowhere"}, TWO[1]]), "unknown group 'nowhere'"),
    (
        json.dumps(
            {
                "architecture": {"components": TWO, "relationships": [{"from": "api", "to": "fn"}]},
                "extra": 1,
            }
        ),
        "Additional properties",
    ),
]


@pytest.mark.parametrize("source", JSON_VALID)
def test_valid_json_architecture(source: str) -> None:
    result = validate_json_architecture(source)
    assert result.valid, result.errors
    assert result.validator == "jsonschema+plumbline"


@pytest.mark.parametrize(("source", "problem"), JSON_INVALID)
def test_invalid_json_architecture(source: str, problem: str) -> None:
    result = validate_json_architecture(source)
    assert not result.valid
    assert any(problem in error for error in result.errors), result.errors


def test_tables_are_large_enough() -> None:
    for valid, invalid in (
        (MERMAID_VALID, MERMAID_INVALID),
        (PUML_VALID, PUML_INVALID),
        (JSON_VALID, JSON_INVALID),
    ):
        assert len(valid) >= 15 and len(invalid) >= 15


@pytest.mark.parametrize(
    ("response", "fmt", "found"),
    [
        ("Here:\n```mermaid\nflowchart LR\n  A[a] --> B[b]\n```\n", "mermaid", True),
        ("Here:\r\n```Mermaid  \r\nflowchart LR\r\n  A[a] --> B[b]\r\n```\r\n", "mermaid", True),
        ("```\nflowchart LR\n  A[a] --> B[b]\n```", "mermaid", True),
        ("flowchart LR\n  A[a] --> B[b]", "mermaid", True),
        ("Text only, no diagram.", "mermaid", False),
        ("```puml\n@startuml\n[A] --> [B]\n@enduml\n```", "plantuml", True),
        ("Intro\n@startuml\n[A] --> [B]\n@enduml\nOutro", "plantuml", True),
        ('See {"architecture": ' + _arch()[16:] + " above", "json", True),
        ("```json\n" + _arch() + "\n```", "json", True),
        ("{not an architecture}", "json", False),
    ],
)
def test_extraction(response: str, fmt: Any, found: bool) -> None:
    assert (extract_diagram(response, fmt) is not None) is found
    result = validate_diagram(response, fmt)
    assert result.found is found
    if found:
        assert result.valid, result.errors
    else:
        assert result.errors == (f"no {fmt} diagram found in the response",)
