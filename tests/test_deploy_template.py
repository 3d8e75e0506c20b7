"""deploy/template.yaml against the code it deploys: the table the code creates, the DynamoDB
calls the service makes (its task role grants exactly those), the environment variables the
code reads, the drain and timeout bounds the load balancer must agree with, the scheduled
close and the webhook deliverer, and the metric the deliverer emits that an alarm watches."""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Iterator
from dataclasses import fields
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import botocore.session
import pytest
from botocore import xform_name
from cfnlint.decode import decode

from dynamo.table import GSI1, GSI2, STREAM, TTL_ATTRIBUTE, table_definition
from leaderboard.cli import build_parser
from leaderboard.config import VARIABLES, Limits, Settings
from leaderboard.drain import SOCKET_CLOSE_WAIT
from leaderboard.webhooks import (
    METRIC_DIMENSION,
    METRIC_NAMESPACE,
    METRICS_EVERY,
    OLDEST_AGE_METRIC,
    OutboxGauge,
)
from leaderboard.workers import CLEANUP_MARGIN
from tests.conftest import Table

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "deploy" / "template.yaml"
PACKAGES = ("dynamo", "resolvers", "rankindex", "gql", "edge", "leaderboard")

OPERATOR_ONLY = {("dynamo/table.py", "create_table")}
"""Call sites the service never reaches on AWS: ``leaderboard create-table`` (and ``serve`` on
the embedded DynamoDB Local only) makes and upgrades the table, run by an operator with their
own credentials; the template creates the table itself."""
EMBEDDED_ONLY = {("dynamo/streams.py", None)}
"""Call sites of the in-process stream reader, which runs beside the embedded backends and in
``leaderboard rank-indexer``; on AWS the Lambda's event source mapping reads the stream."""
TRANSACTION_ITEM_ACTIONS = {
    "ConditionCheck": "ConditionCheckItem",
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
}
"""IAM has no TransactWriteItems action: a transaction is authorised per item, by the action
of each item's kind."""
STAR_ACTIONS = {
    "ec2:CreateNetworkInterface",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeSubnets",
    "ec2:DeleteNetworkInterface",
    "ec2:AssignPrivateIpAddresses",
    "ec2:UnassignPrivateIpAddresses",
    "ecr:GetAuthorizationToken",
}
"""The only actions granted on "*": they have no resource type in IAM (a Lambda function's
network interfaces in the VPC; the registry's account-wide login token)."""
ENV_NAME = re.compile(r"^(LEADERBOARD|AWS)_[A-Z0-9_]+$")
TASK_DEFINITIONS = ("TaskDefinition", "CloseTaskDefinition", "DelivererTaskDefinition")
"""The ECS task definitions: the service's, the scheduled close's and the deliverer's."""
COMMANDS = ("leaderboard/close_commands.py", "leaderboard/webhooks.py")
"""The modules of ``leaderboard close-periods`` and ``leaderboard deliver-webhooks``."""
SERVING_ONLY = {
    "LEADERBOARD_WORKERS",
    "LEADERBOARD_LIMIT_TRUSTED_PROXY_HOPS",
    "LEADERBOARD_LIMIT_HEAD_TIMEOUT",
}
"""Settings of the serving tasks alone (their worker processes, and the HTTP limits that suit
the load balancer); the close and the deliverer get the rest of the service's environment."""
WEBHOOK_ONLY = {"WebhookSecret", "DelivererTaskDefinition", "Deliverer", "WebhookOutboxAlarm"}
"""The resources that exist only with a WebhookUrl (the condition HasWebhook)."""
_NO_VALUE = object()


@cache
def _template() -> dict[str, Any]:
    """The template as plain data; intrinsic functions are dicts such as {"Ref": ...}."""
    decoded, problems = decode(str(TEMPLATE))
    assert not problems, problems
    loaded: dict[str, Any] = json.loads(json.dumps(decoded))
    return loaded


def _resource(name: str) -> dict[str, Any]:
    properties: dict[str, Any] = _template()["Resources"][name]["Properties"]
    return properties


def _statements(role: str) -> list[dict[str, Any]]:
    return [
        statement
        for policy in _resource(role)["Policies"]
        for statement in policy["PolicyDocument"]["Statement"]
    ]


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _resolved(value: Any, *, webhook: bool) -> Any:
    """``value`` as deployed with WebhookUrl set (``webhook``) or empty: each ``Fn::If`` on
    HasWebhook taken, each ``AWS::NoValue`` left out."""
    if value == {"Ref": "AWS::NoValue"}:
        return _NO_VALUE
    if isinstance(value, dict):
        branches = value.get("Fn::If")
        if len(value) == 1 and branches is not None and branches[0] == "HasWebhook":
            return _resolved(branches[1] if webhook else branches[2], webhook=webhook)
        pairs = ((k, _resolved(v, webhook=webhook)) for k, v in value.items())
        return {k: v for k, v in pairs if v is not _NO_VALUE}
    if isinstance(value, list):
        items = (_resolved(v, webhook=webhook) for v in value)
        return [v for v in items if v is not _NO_VALUE]
    return value


def _container_of(task_definition: str, *, webhook: bool = True) -> dict[str, Any]:
    """The one container of a task definition, as deployed with or without a WebhookUrl."""
    resolved = _resolved(_resource(task_definition), webhook=webhook)
    (container,) = resolved["ContainerDefinitions"]
    result: dict[str, Any] = container
    return result


def _env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {pair["Name"]: pair["Value"] for pair in container.get("Environment", [])}


def _secrets_of(container: dict[str, Any]) -> dict[str, Any]:
    return {pair["Name"]: pair["ValueFrom"] for pair in container.get("Secrets", [])}


def _container() -> dict[str, Any]:
    (container,) = _resource("TaskDefinition")["ContainerDefinitions"]
    result: dict[str, Any] = container
    return result


def _container_env() -> dict[str, Any]:
    return {pair["Name"]: pair["Value"] for pair in _container()["Environment"]}


def _lambda_env() -> dict[str, Any]:
    variables: dict[str, Any] = _resource("Projector")["Environment"]["Variables"]
    return variables


# --- The table ---------------------------------------------------------------------------


def _sorted(items: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: str(item[key]))


def test_the_template_declares_the_table_the_code_defines() -> None:
    declared = _resource("Table")
    defined = table_definition("any")
    assert declared["TableName"] == {"Ref": "TableName"}
    assert declared["BillingMode"] == defined["BillingMode"] == "PAY_PER_REQUEST"
    assert _sorted(declared["AttributeDefinitions"], "AttributeName") == _sorted(
        defined["AttributeDefinitions"], "AttributeName"
    )
    assert declared["KeySchema"] == defined["KeySchema"]
    assert _sorted(declared["GlobalSecondaryIndexes"], "IndexName") == _sorted(
        defined["GlobalSecondaryIndexes"], "IndexName"
    )
    assert declared["StreamSpecification"] == {"StreamViewType": STREAM["StreamViewType"]}
    assert declared["TimeToLiveSpecification"] == {"AttributeName": TTL_ATTRIBUTE, "Enabled": True}


def test_the_deployed_table_is_recoverable_protected_and_encrypted() -> None:
    declared = _resource("Table")
    assert declared["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert declared["DeletionProtectionEnabled"] is True
    assert declared["SSESpecification"] == {"SSEEnabled": True, "SSEType": "KMS"}
    assert _template()["Resources"]["Table"]["DeletionPolicy"] == "Retain"


async def test_the_template_table_equals_the_table_create_table_makes(table: Table) -> None:
    """The table ``create_table`` makes on DynamoDB Local, as DescribeTable reports it."""
    client = table.db.client
    made = (await client.describe_table(TableName=table.db.table))["Table"]
    ttl = (await client.describe_time_to_live(TableName=table.db.table))["TimeToLiveDescription"]
    declared = _resource("Table")
    assert _sorted(declared["AttributeDefinitions"], "AttributeName") == _sorted(
        [dict(a) for a in made["AttributeDefinitions"]], "AttributeName"
    )
    assert declared["KeySchema"] == [dict(k) for k in made["KeySchema"]]
    assert {
        index["IndexName"]: (
            [dict(k) for k in index["KeySchema"]],
            dict(index["Projection"]),
        )
        for index in made.get("GlobalSecondaryIndexes", [])
    } == {
        index["IndexName"]: (index["KeySchema"], index["Projection"])
        for index in declared["GlobalSecondaryIndexes"]
    }
    assert made["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert declared["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert made["BillingModeSummary"]["BillingMode"] == declared["BillingMode"]
    assert ttl.get("AttributeName") == declared["TimeToLiveSpecification"]["AttributeName"]


# --- The DynamoDB calls of the code ------------------------------------------------------


def _operation_names() -> dict[str, str]:
    """snake_case method name -> API operation, for DynamoDB and DynamoDB Streams."""
    session = botocore.session.get_session()
    return {
        xform_name(operation): operation
        for service in ("dynamodb", "dynamodbstreams")
        for operation in session.get_service_model(service).operation_names
    }


def _functions(tree: ast.AST) -> Iterator[tuple[str | None, ast.AST]]:
    """Every node of a module with the name of the outermost function holding it."""
    for top in ast.iter_child_nodes(tree):
        name = top.name if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef) else None
        if isinstance(top, ast.ClassDef):
            for member in top.body:
                owner = (
                    member.name
                    if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef)
                    else None
                )
                yield from ((owner, node) for node in ast.walk(member))
        else:
            yield from ((name, node) for node in ast.walk(top))


def _called(node: ast.AST, operations: dict[str, str]) -> str | None:
    """The operation a call node makes: ``client.query(...)``, a paginator or a waiter."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return None
    method = node.func.attr
    if method in operations:
        return operations[method]
    argument = node.args[0] if node.args else None
    if not (isinstance(argument, ast.Constant) and isinstance(argument.value, str)):
        return None
    if method == "get_paginator":
        return operations[argument.value]
    if method == "get_waiter":
        waiters = {"table_exists": "DescribeTable", "table_not_exists": "DescribeTable"}
        return waiters[argument.value]
    return None


@cache
def _call_sites() -> dict[tuple[str, str | None], frozenset[str]]:
    """(module path, function) -> the DynamoDB and DynamoDB Streams operations it calls."""
    operations = _operation_names()
    sites: dict[tuple[str, str | None], set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            module = path.relative_to(ROOT).as_posix()
            for function, node in _functions(ast.parse(path.read_text())):
                operation = _called(node, operations)
                if operation is not None:
                    sites.setdefault((module, function), set()).add(operation)
    return {site: frozenset(ops) for site, ops in sites.items()}


def _excluded(site: tuple[str, str | None]) -> bool:
    return site in OPERATOR_ONLY or (site[0], None) in EMBEDDED_ONLY


def _transaction_item_kinds() -> set[str]:
    """The kinds of transaction items the code builds: the keys of dict literals."""
    kinds: set[str] = set()
    for path in (ROOT / "dynamo").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict):
                kinds.update(
                    key.value
                    for key in node.keys
                    if isinstance(key, ast.Constant) and key.value in TRANSACTION_ITEM_ACTIONS
                )
    return kinds


def _iam_actions(operations: set[str]) -> set[str]:
    actions = {f"dynamodb:{op}" for op in operations if op != "TransactWriteItems"}
    if "TransactWriteItems" in operations:
        actions |= {
            f"dynamodb:{TRANSACTION_ITEM_ACTIONS[kind]}" for kind in _transaction_item_kinds()
        }
    return actions


def _serving_operations() -> set[str]:
    return {op for site, ops in _call_sites().items() if not _excluded(site) for op in ops}


def _dynamodb_statements(role: str) -> list[dict[str, Any]]:
    return [
        s
        for s in _statements(role)
        if any(str(a).startswith("dynamodb:") for a in _listed(s["Action"]))
    ]


def test_the_code_walk_finds_the_calls_of_reads_writes_and_the_health_check() -> None:
    serving = _serving_operations()
    assert {"Query", "GetItem", "BatchGetItem", "TransactWriteItems", "DescribeTable"} <= serving
    assert {"CreateTable", "UpdateTimeToLive", "GetRecords"}.isdisjoint(serving)
    assert _transaction_item_kinds() == set(TRANSACTION_ITEM_ACTIONS)


def test_the_task_role_grants_exactly_the_dynamodb_actions_the_service_calls() -> None:
    granted = {a for s in _dynamodb_statements("TaskRole") for a in _listed(s["Action"])}
    assert granted == _iam_actions(_serving_operations())


def test_the_task_role_grants_no_operator_or_stream_call() -> None:
    granted = {a for s in _dynamodb_statements("TaskRole") for a in _listed(s["Action"])}
    elsewhere = {op for site, ops in _call_sites().items() if _excluded(site) for op in ops}
    only_elsewhere = elsewhere - _serving_operations()
    assert {"CreateTable", "UpdateTable", "DescribeTimeToLive", "UpdateTimeToLive"} <= (
        only_elsewhere
    )
    assert {"DescribeStream", "GetShardIterator", "GetRecords"} <= only_elsewhere
    assert granted.isdisjoint(f"dynamodb:{op}" for op in only_elsewhere)


def _imported(module: str) -> Iterator[str]:
    """The service's modules (paths from the root) that ``module`` imports."""
    for node in ast.walk(ast.parse((ROOT / module).read_text())):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            if name.split(".")[0] not in PACKAGES:
                continue
            path = name.replace(".", "/")
            yield from (c for c in (f"{path}.py", f"{path}/__init__.py") if (ROOT / c).is_file())


def _reached(*modules: str) -> set[str]:
    """``modules`` and every module of the service they import, directly or not."""
    seen: set[str] = set()
    waiting = list(modules)
    while waiting:
        module = waiting.pop()
        if module not in seen:
            seen.add(module)
            waiting.extend(_imported(module))
    return seen


def test_the_task_role_grants_the_calls_of_the_close_and_the_deliverer() -> None:
    """The modules ``close-periods`` and ``deliver-webhooks`` run, and those they import: each
    of their DynamoDB calls is one the task role, which their tasks have too, grants."""
    assert set(COMMANDS) <= _reached("leaderboard/cli.py")
    reached = _reached(*COMMANDS)
    assert {"dynamo/closing.py", "dynamo/deliveries.py", "dynamo/reads.py"} <= reached
    operations = {
        op
        for site, ops in _call_sites().items()
        if site[0] in reached and not _excluded(site)
        for op in ops
    }
    assert {"UpdateItem", "PutItem", "BatchWriteItem", "Query", "GetItem", "BatchGetItem"} <= (
        operations
    )
    granted = {a for s in _dynamodb_statements("TaskRole") for a in _listed(s["Action"])}
    assert _iam_actions(operations) <= granted
    for job in ("CloseTaskDefinition", "DelivererTaskDefinition"):
        assert _resource(job)["TaskRoleArn"] == {"Fn::GetAtt": ["TaskRole", "Arn"]}


def test_the_task_role_reaches_the_table_and_its_indexes_only() -> None:
    (statement,) = _dynamodb_statements("TaskRole")
    indexes = [index["IndexName"] for index in table_definition("any")["GlobalSecondaryIndexes"]]
    assert indexes == [GSI1, GSI2]
    assert statement["Effect"] == "Allow"
    assert statement["Resource"] == [
        {"Fn::GetAtt": ["Table", "Arn"]},
        *({"Fn::Sub": f"${{Table.Arn}}/index/{index}"} for index in indexes),
    ]


def test_no_role_grants_a_wildcard_but_where_iam_requires_one() -> None:
    roles = [
        name
        for name, resource in _template()["Resources"].items()
        if resource["Type"] == "AWS::IAM::Role"
    ]
    assert sorted(roles) == ["ExecutionRole", "ProjectorRole", "SchedulerRole", "TaskRole"]
    for role in roles:
        for statement in _statements(role):
            actions = {str(a) for a in _listed(statement["Action"])}
            assert not any("*" in action for action in actions), (role, actions)
            if "*" in _listed(statement["Resource"]):
                assert actions <= STAR_ACTIONS, (role, actions)


# --- The projector -----------------------------------------------------------------------


def test_the_projector_reads_the_stream_in_order_with_bounded_retries() -> None:
    function = _resource("Projector")
    assert function["Runtime"] == "python3.11"
    assert function["Handler"] == "rankindex.lambda_handler.handler"
    assert function["Code"] == "../dist/rankindex-lambda.zip"
    mapping = _resource("ProjectorStream")
    assert mapping["EventSourceArn"] == {"Fn::GetAtt": ["Table", "StreamArn"]}
    assert mapping["ParallelizationFactor"] == 1
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BisectBatchOnFunctionError"] is True
    assert 0 <= mapping["MaximumRetryAttempts"] <= 100
    assert 60 <= mapping["MaximumRecordAgeInSeconds"] <= 86400
    assert mapping["DestinationConfig"]["OnFailure"]["Destination"] == {
        "Fn::GetAtt": ["ProjectorFailures", "Arn"]
    }
    assert _resource("ProjectorFailures")["MessageRetentionPeriod"] == 14 * 24 * 3600


def test_the_projector_role_reads_the_stream_and_sends_failures_only() -> None:
    by_sid = {s["Sid"]: s for s in _statements("ProjectorRole")}
    assert set(by_sid["ReadTheTableStream"]["Action"]) == {
        "dynamodb:DescribeStream",
        "dynamodb:GetRecords",
        "dynamodb:GetShardIterator",
    }
    assert by_sid["ReadTheTableStream"]["Resource"] == {"Fn::GetAtt": ["Table", "StreamArn"]}
    assert by_sid["ListTheTableStreams"]["Resource"] == {"Fn::Sub": "${Table.Arn}/stream/*"}
    assert by_sid["SendFailedBatches"] == {
        "Sid": "SendFailedBatches",
        "Effect": "Allow",
        "Action": "sqs:SendMessage",
        "Resource": {"Fn::GetAtt": ["ProjectorFailures", "Arn"]},
    }


# --- The environment ---------------------------------------------------------------------


def _reads(tree: ast.AST) -> Iterator[str]:
    """Environment variable names a module reads: ``os.environ.get("X")``, ``env.get("X")``,
    ``os.environ["X"]``, ``os.getenv("X")`` and config.py's ``_seconds``/``_whole``."""
    for node in ast.walk(tree):
        name: ast.expr | None = None
        if isinstance(node, ast.Call) and node.args:
            called = node.func
            method = called.attr if isinstance(called, ast.Attribute) else None
            if isinstance(called, ast.Name):
                method = called.id
            if method in ("get", "getenv", "_seconds", "_whole"):
                name = node.args[0]
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value).endswith("environ"):
            name = node.slice
        if isinstance(name, ast.Constant) and ENV_NAME.match(str(name.value)):
            yield str(name.value)


def _names_read(*modules: str) -> set[str]:
    """The environment variables the given modules read (every module of the service when
    none is given); ``Limits.from_env`` reads one per field of ``Limits``."""
    if modules:
        paths = [ROOT / module for module in modules]
    else:
        paths = [path for package in PACKAGES for path in (ROOT / package).rglob("*.py")]
    names = {name for path in paths for name in _reads(ast.parse(path.read_text()))}
    if not modules or "leaderboard/config.py" in modules:
        names |= {f"LEADERBOARD_LIMIT_{spec.name.upper()}" for spec in fields(Limits)}
    return names


def test_the_code_walk_finds_the_settings_the_service_reads() -> None:
    read = _names_read()
    assert {
        "AWS_ENDPOINT_URL_DYNAMODB",
        "AWS_REGION",
        "LEADERBOARD_TABLE",
        "LEADERBOARD_REDIS_URL",
        "LEADERBOARD_CURSOR_SECRET",
        "LEADERBOARD_API_KEYS",
        "LEADERBOARD_WORKERS",
        "LEADERBOARD_CACHE_MB",
        "LEADERBOARD_LIMIT_TRUSTED_PROXY_HOPS",
    } <= read
    assert _names_read("rankindex/lambda_handler.py") == {
        "LEADERBOARD_REDIS_URL",
        "LEADERBOARD_TABLE",
    }


def test_every_variable_the_container_gets_is_one_the_code_reads() -> None:
    secrets = {pair["Name"] for pair in _container()["Secrets"]}
    given = set(_container_env()) | secrets
    assert given <= _names_read()
    assert set(_container_env()).isdisjoint(secrets)


def test_every_variable_the_tasks_set_is_declared_in_the_settings() -> None:
    """The service's, the close's and the deliverer's environment and secrets, with and
    without a WebhookUrl: each is a variable of leaderboard.config.VARIABLES (or a limit's)
    and one the code reads."""
    resources = _template()["Resources"]
    declared = {variable.name for variable in VARIABLES} | {
        f"LEADERBOARD_LIMIT_{spec.name.upper()}" for spec in fields(Limits)
    }
    assert {
        name for name, r in resources.items() if r["Type"] == "AWS::ECS::TaskDefinition"
    } == set(TASK_DEFINITIONS)
    for name in TASK_DEFINITIONS:
        for webhook in (True, False):
            container = _container_of(name, webhook=webhook)
            env, secrets = _env_of(container), _secrets_of(container)
            assert set(env).isdisjoint(secrets), name
            given = set(env) | set(secrets)
            assert given <= declared, (name, given - declared)
            assert given <= _names_read(), (name, given - _names_read())


def test_the_container_gets_every_setting_it_needs_on_aws() -> None:
    env = _container_env()
    assert env["AWS_ENDPOINT_URL_DYNAMODB"] == {
        "Fn::Sub": "https://dynamodb.${AWS::Region}.${AWS::URLSuffix}"
    }
    assert env["AWS_REGION"] == {"Ref": "AWS::Region"}
    assert env["LEADERBOARD_TABLE"] == {"Ref": "Table"}
    assert env["LEADERBOARD_REDIS_URL"]["Fn::Sub"].startswith("rediss://")
    assert env["LEADERBOARD_LOG_FORMAT"] == "json"
    assert env["LEADERBOARD_WORKERS"] == {"Ref": "Workers"}


def test_the_keys_and_the_cursor_secret_come_from_the_secret_alone() -> None:
    secret = _resource("ServiceSecret")["GenerateSecretString"]
    keys = set(json.loads(secret["SecretStringTemplate"]))
    assert secret["GenerateStringKey"] == "LEADERBOARD_CURSOR_SECRET"
    assert json.loads(secret["SecretStringTemplate"]) == dict.fromkeys(keys, "")
    injected = {pair["Name"]: pair["ValueFrom"] for pair in _container()["Secrets"]}
    assert injected == {
        name: {"Fn::Sub": f"${{ServiceSecret}}:{name}::"}
        for name in keys | {"LEADERBOARD_CURSOR_SECRET"}
    }
    assert set(injected) == {
        "LEADERBOARD_CURSOR_SECRET",
        "LEADERBOARD_API_KEYS",
        "LEADERBOARD_ADMIN_KEYS",
        "LEADERBOARD_METRICS_KEYS",
    }


def test_the_projector_indexes_the_table_the_service_reads_ranks_of() -> None:
    env = _lambda_env()
    assert set(env) <= _names_read("rankindex/lambda_handler.py")
    assert env == {
        "LEADERBOARD_REDIS_URL": _container_env()["LEADERBOARD_REDIS_URL"],
        "LEADERBOARD_TABLE": _container_env()["LEADERBOARD_TABLE"],
    }


def test_the_limits_the_template_sets_parse_and_suit_the_load_balancer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in _container_env().items():
        if name.startswith("LEADERBOARD_LIMIT_"):
            monkeypatch.setenv(name, value)
    limits = Limits.from_env()
    attributes = {a["Key"]: a["Value"] for a in _resource("LoadBalancer")["LoadBalancerAttributes"]}
    idle = int(attributes["idle_timeout.timeout_seconds"])
    assert limits.trusted_proxy_hops == 1
    assert limits.socket_heartbeat < idle
    assert limits.head_timeout > idle


# --- Serving and draining ----------------------------------------------------------------


def test_the_load_balancer_waits_out_the_service_drain_bound() -> None:
    drain = math.ceil(Limits().shutdown_timeout + SOCKET_CLOSE_WAIT + CLEANUP_MARGIN)
    group = _resource("TargetGroup")
    attributes = {a["Key"]: a["Value"] for a in group["TargetGroupAttributes"]}
    assert int(attributes["deregistration_delay.timeout_seconds"]) == drain
    assert _container()["StopTimeout"] > drain
    assert group["HealthCheckPath"] == "/livez"
    assert group["Port"] == _container()["PortMappings"][0]["ContainerPort"] == 8080


def test_a_failed_deployment_rolls_back_and_cpu_scales_the_service() -> None:
    deployment = _resource("Service")["DeploymentConfiguration"]
    assert deployment["DeploymentCircuitBreaker"] == {"Enable": True, "Rollback": True}
    target = _resource("ScalableTarget")
    assert (target["MinCapacity"], target["MaxCapacity"]) == (
        {"Ref": "DesiredTasks"},
        {"Ref": "MaximumTasks"},
    )
    tracking = _resource("CpuScaling")["TargetTrackingScalingPolicyConfiguration"]
    assert tracking["PredefinedMetricSpecification"]["PredefinedMetricType"] == (
        "ECSServiceAverageCPUUtilization"
    )


# --- The close and the deliverer --------------------------------------------------------


def _command(task_definition: str) -> Any:
    """The parsed command of a task definition's container (``leaderboard <command> ...``)."""
    command = _container_of(task_definition)["Command"]
    assert command[0] == "leaderboard"
    return build_parser().parse_args(command[1:])


def test_the_close_runs_on_a_schedule_as_a_one_off_task_in_the_cluster() -> None:
    assert _template()["Parameters"]["CloseScheduleExpression"]["Default"] == "rate(5 minutes)"
    schedule = _resource("CloseSchedule")
    assert schedule["ScheduleExpression"] == {"Ref": "CloseScheduleExpression"}
    assert schedule["State"] == "ENABLED"
    assert schedule["FlexibleTimeWindow"] == {"Mode": "OFF"}
    target = schedule["Target"]
    assert target["Arn"] == {"Fn::GetAtt": ["Cluster", "Arn"]}
    assert target["RoleArn"] == {"Fn::GetAtt": ["SchedulerRole", "Arn"]}
    ecs = target["EcsParameters"]
    assert ecs["TaskDefinitionArn"] == {"Ref": "CloseTaskDefinition"}
    assert (ecs["LaunchType"], ecs["TaskCount"]) == ("FARGATE", 1)
    assert ecs["NetworkConfiguration"] == _resource("Service")["NetworkConfiguration"]
    command = _command("CloseTaskDefinition")
    assert (command.command, command.boards, command.grace) == ("close-periods", None, None)


def test_the_scheduler_role_may_run_the_close_and_pass_its_roles_only() -> None:
    (trust,) = _resource("SchedulerRole")["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "scheduler.amazonaws.com"}
    assert trust["Condition"] == {"StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}}
    statements = _statements("SchedulerRole")
    by_action = {action: s for s in statements for action in _listed(s["Action"])}
    assert len(by_action) == len(statements)
    assert set(by_action) == {"ecs:RunTask", "iam:PassRole"}
    assert all(s["Effect"] == "Allow" for s in statements)
    run = by_action["ecs:RunTask"]
    assert run["Resource"] == {"Ref": "CloseTaskDefinition"}
    assert run["Condition"] == {"ArnEquals": {"ecs:cluster": {"Fn::GetAtt": ["Cluster", "Arn"]}}}
    close = _resource("CloseTaskDefinition")
    passed = by_action["iam:PassRole"]
    assert sorted(_listed(passed["Resource"]), key=str) == sorted(
        [close["TaskRoleArn"], close["ExecutionRoleArn"]], key=str
    )
    assert passed["Condition"] == {
        "StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}
    }


def test_the_close_and_the_deliverer_run_the_service_image_roles_and_settings() -> None:
    """The same image, roles and log group as the service, and its environment but for the
    serving settings; with a WebhookUrl, the webhook's URL and secret too."""
    service = _resource("TaskDefinition")
    served = _container_of("TaskDefinition")
    served_env = _env_of(served)
    served_logs = served["LogConfiguration"]["Options"]["awslogs-group"]
    assert served_env.keys() >= SERVING_ONLY
    for name, webhooks in (
        ("CloseTaskDefinition", (True, False)),
        ("DelivererTaskDefinition", (True,)),
    ):
        job = _resource(name)
        for key in ("TaskRoleArn", "ExecutionRoleArn", "NetworkMode", "RequiresCompatibilities"):
            assert job[key] == service[key], (name, key)
        for webhook in webhooks:
            container = _container_of(name, webhook=webhook)
            assert (container["Name"], container["Image"]) == (served["Name"], served["Image"])
            assert container["LogConfiguration"]["Options"]["awslogs-group"] == served_logs
            expected = {k: v for k, v in served_env.items() if k not in SERVING_ONLY}
            secrets: dict[str, Any] = {}
            if webhook:
                expected["LEADERBOARD_WEBHOOK_URL"] = {"Ref": "WebhookUrl"}
                secrets["LEADERBOARD_WEBHOOK_SECRET"] = {
                    "Fn::Sub": "${WebhookSecret}:LEADERBOARD_WEBHOOK_SECRET::"
                }
            assert _env_of(container) == expected, (name, webhook)
            assert _secrets_of(container) == secrets, (name, webhook)


def test_the_webhook_secret_is_generated_and_read_by_the_execution_role() -> None:
    generated = _resource("WebhookSecret")["GenerateSecretString"]
    assert generated["GenerateStringKey"] == "LEADERBOARD_WEBHOOK_SECRET"
    assert json.loads(generated["SecretStringTemplate"]) == {}
    by_sid = {s["Sid"]: s for s in _statements("ExecutionRole")}
    reads = by_sid["ReadTheSecrets"]
    assert _resolved(reads, webhook=True)["Resource"] == [
        {"Ref": "ServiceSecret"},
        {"Ref": "WebhookSecret"},
    ]
    assert _resolved(reads, webhook=False)["Resource"] == {"Ref": "ServiceSecret"}


def test_the_deliverer_and_its_alarm_exist_with_a_webhook_url_only() -> None:
    template = _template()
    assert template["Parameters"]["WebhookUrl"]["Default"] == ""
    assert template["Conditions"]["HasWebhook"] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "WebhookUrl"}, ""]}]
    }
    conditional = {
        name for name, r in template["Resources"].items() if r.get("Condition") == "HasWebhook"
    }
    assert conditional == WEBHOOK_ONLY
    outputs = {name for name, o in template["Outputs"].items() if "Condition" in o}
    assert outputs == {"DelivererServiceName", "WebhookSecretArn"}
    assert all(template["Outputs"][name]["Condition"] == "HasWebhook" for name in outputs)


def test_one_deliverer_runs_at_a_time_and_outlasts_its_attempt_in_flight() -> None:
    deliverer = _resource("Deliverer")
    assert deliverer["Cluster"] == {"Ref": "Cluster"}
    assert deliverer["TaskDefinition"] == {"Ref": "DelivererTaskDefinition"}
    assert (deliverer["LaunchType"], deliverer["DesiredCount"]) == ("FARGATE", 1)
    deployment = deliverer["DeploymentConfiguration"]
    assert (deployment["MinimumHealthyPercent"], deployment["MaximumPercent"]) == (0, 100)
    assert deployment["DeploymentCircuitBreaker"] == {"Enable": True, "Rollback": True}
    assert deliverer["NetworkConfiguration"] == _resource("Service")["NetworkConfiguration"]
    assert "LoadBalancers" not in deliverer
    command = _command("DelivererTaskDefinition")
    assert (command.command, command.once) == ("deliver-webhooks", False)
    assert _container_of("DelivererTaskDefinition")["StopTimeout"] > (
        Settings.webhook_timeout_seconds
    )


# --- Alarms ------------------------------------------------------------------------------


def _alarm_metrics(alarm: dict[str, Any]) -> set[tuple[str, str]]:
    """(namespace, metric name) of every metric an alarm watches, alone or in metric math."""
    if "MetricName" in alarm:
        return {(alarm["Namespace"], alarm["MetricName"])}
    return {
        (query["MetricStat"]["Metric"]["Namespace"], query["MetricStat"]["Metric"]["MetricName"])
        for query in alarm["Metrics"]
        if "MetricStat" in query
    }


def test_the_alarms_watch_errors_latency_throttles_and_the_projector() -> None:
    alarms = {
        name: resource["Properties"]
        for name, resource in _template()["Resources"].items()
        if resource["Type"] == "AWS::CloudWatch::Alarm"
    }
    watched = {metric for alarm in alarms.values() for metric in _alarm_metrics(alarm)}
    assert {
        ("AWS/ApplicationELB", "HTTPCode_Target_5XX_Count"),
        ("AWS/ApplicationELB", "RequestCount"),
        ("AWS/ApplicationELB", "TargetResponseTime"),
        ("AWS/DynamoDB", "ReadThrottleEvents"),
        ("AWS/DynamoDB", "WriteThrottleEvents"),
        ("AWS/Lambda", "IteratorAge"),
        ("AWS/Lambda", "Errors"),
        ("AWS/SQS", "ApproximateNumberOfMessagesVisible"),
    } <= watched
    for alarm in alarms.values():
        assert alarm["AlarmActions"] == [{"Ref": "AlarmTopic"}]
        assert alarm["TreatMissingData"] == "notBreaching"
    (rate,) = [q for q in alarms["ServerErrorRateAlarm"]["Metrics"] if q.get("ReturnData")]
    assert "100 * (FILL(target5xx, 0) + FILL(lb5xx, 0)) / requests" in rate["Expression"]
    assert alarms["LatencyAlarm"]["ExtendedStatistic"] == "p99"


def test_the_outbox_alarm_watches_the_age_the_deliverer_emits() -> None:
    alarm = _resource("WebhookOutboxAlarm")
    line = json.loads(OutboxGauge(datetime.now(UTC), 0, 0.0, 0).emf("any"))
    (emitted,) = line["_aws"]["CloudWatchMetrics"]
    assert (alarm["Namespace"], alarm["MetricName"]) == (METRIC_NAMESPACE, OLDEST_AGE_METRIC)
    assert alarm["Namespace"] == emitted["Namespace"]
    assert alarm["MetricName"] in {metric["Name"] for metric in emitted["Metrics"]}
    table = _env_of(_container_of("DelivererTaskDefinition"))["LEADERBOARD_TABLE"]
    assert alarm["Dimensions"] == [{"Name": METRIC_DIMENSION, "Value": table}]
    assert emitted["Dimensions"] == [[METRIC_DIMENSION]]
    assert alarm["Statistic"] == "Maximum"
    assert alarm["Period"] >= 2 * METRICS_EVERY  # several readings in each period
    assert alarm["EvaluationPeriods"] == 3
    assert "DatapointsToAlarm" not in alarm
    assert alarm["Threshold"] == {"Ref": "WebhookOutboxAlarmSeconds"}
    assert _template()["Parameters"]["WebhookOutboxAlarmSeconds"]["Default"] == 3600
    assert alarm["ComparisonOperator"] == "GreaterThanThreshold"
    assert alarm["TreatMissingData"] == "notBreaching"
    assert alarm["AlarmActions"] == alarm["OKActions"] == [{"Ref": "AlarmTopic"}]
