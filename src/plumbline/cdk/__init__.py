"""CDK synthesis scoring: does the AWS CDK (Python, v2) app a model wrote synthesize?

Pipeline per sample (read -> validate -> compute -> render):

1. ``extract``: recover the app's files and entry point from the response.
2. ``synth``: run it as ``cdk synth`` would, in a bubblewrap sandbox, in a warm single-use
   worker (``plumbline.sandbox``); collect the cloud assembly.
3. ``lint``: cfn-lint every template; errors fail, warnings are recorded.
4. ``outcomes``: exactly one of passed, extraction_failed, python_error, synth_error,
   lint_error, timeout, resource_limit, forged_output (an assembly file no synthesis in the
   run wrote), infra_error (unscored, never the model's fault).
5. ``scorer``: the Inspect scorer ``cdk_verify``; ``plumbline cdk check FILE`` on the CLI.

Apps see ``CDK_DEFAULT_ACCOUNT=123456789012`` and ``CDK_DEFAULT_REGION=us-east-1``
(documented dummies; nothing is ever deployed or contacted), the context the CDK CLI passes
(``CDK_CONTEXT_JSON``) plus their ``cdk.json`` context, and no credentials of any kind.
"""

from plumbline.cdk.extract import ExtractedApp, extract_app, extract_from_source
from plumbline.cdk.outcomes import LintFinding, Outcome, SynthReport
from plumbline.cdk.runtime import DUMMY_ACCOUNT, DUMMY_REGION
from plumbline.cdk.synth import CdkSynthesizer, SynthOptions

__all__ = [
    "DUMMY_ACCOUNT",
    "DUMMY_REGION",
    "CdkSynthesizer",
    "ExtractedApp",
    "LintFinding",
    "Outcome",
    "SynthOptions",
    "SynthReport",
    "extract_app",
    "extract_from_source",
]
