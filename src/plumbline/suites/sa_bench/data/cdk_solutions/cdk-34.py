"""cdk-34: a CodePipeline that takes source from S3 and builds and tests it with CodeBuild."""

from typing import Any

from aws_cdk import App, Stack
from aws_cdk import aws_codebuild as codebuild
from aws_cdk import aws_codepipeline as codepipeline
from aws_cdk import aws_codepipeline_actions as actions
from aws_cdk import aws_s3 as s3
from constructs import Construct


class DeliveryPipelineStack(Stack):
    def __init__(self, scope: Construct, construct_id: str, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        source_bucket = s3.Bucket(
            self,
            "SourceBucket",
            versioned=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
        )
        build_project = codebuild.PipelineProject(
            self,
            "BuildAndTest",
            environment=codebuild.BuildEnvironment(
                build_image=codebuild.LinuxBuildImage.STANDARD_7_0,
                compute_type=codebuild.ComputeType.SMALL,
            ),
            build_spec=codebuild.BuildSpec.from_object(
                {
                    "version": "0.2",
                    "phases": {
                        "install": {"commands": ["pip install -r requirements.txt"]},
                        "build": {"commands": ["python -m pytest -q"]},
                    },
                    "artifacts": {"files": ["**/*"]},
                }
            ),
        )
        source_output = codepipeline.Artifact("Source")
        build_output = codepipeline.Artifact("Build")
        codepipeline.Pipeline(
            self,
            "DeliveryPipeline",
            pipeline_type=codepipeline.PipelineType.V2,
            stages=[
                codepipeline.StageProps(
                    stage_name="Source",
                    actions=[
                        actions.S3SourceAction(
                            action_name="FetchSource",
                            bucket=source_bucket,
                            bucket_key="app/source.zip",
                            output=source_output,
                            trigger=actions.S3Trigger.EVENTS,
                        )
                    ],
                ),
                codepipeline.StageProps(
                    stage_name="Build",
                    actions=[
                        actions.CodeBuildAction(
                            action_name="BuildAndTest",
                            project=build_project,
                            input=source_output,
                            outputs=[build_output],
                        )
                    ],
                ),
                codepipeline.StageProps(
                    stage_name="Approve",
                    actions=[actions.ManualApprovalAction(action_name="ReleaseApproval")],
                ),
            ],
        )


app = App()
DeliveryPipelineStack(app, "DeliveryPipelineStack")
app.synth()
