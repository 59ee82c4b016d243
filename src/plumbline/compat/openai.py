"""The openai SDK's private names plumbline uses: the probe's prepared chat completion request.

A probe trial is one small JSON request; building it through the SDK's public
`chat.completions.create` costs a per-request copy of the options, header merging and the
parameter transform, about a fifth of a trial's client CPU. `PreparedPost` sends the request
the SDK itself built once per client (its URL, headers and timeouts), each trial's body encoded
as the SDK encodes it, through the client's own HTTP client and transport (httpx2's standard
connection pool), and turns failures into the SDK's exceptions as `AsyncAPIClient.request`
does. `post_chat_completion` and `parse_chat_completion` are the SDK's `post` and its reading
of the answer into a `ChatCompletion`, for the answers the probe does not read itself.

When `ADAPTER` is not fast, the probe calls Inspect's provider (or `Model.generate`) instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plumbline.compat import Adapter, CheckedRange

#: Chat completions' path under the client's base URL.
CHAT_COMPLETIONS = "/chat/completions"


ADAPTER = Adapter(
    name="openai",
    distribution="openai",
    # the releases this module was run against by the tests (the lock's, and the newest the
    # plain-install test resolves); a newer major release takes the public path until checked
    checked=CheckedRange("3.57.0", "4"),
    names=(
        "openai._base_client:make_request_options",
        "openai._base_client:get_platform",
        "openai._models:FinalRequestOptions.construct",
        "openai._response:AsyncAPIResponse.parse",
        "openai._utils:asyncify",
        "openai._utils._json:openapi_dumps",
        "openai._httpx2:request_exceptions",
        "openai._httpx2:status_exceptions",
        "openai._httpx2:timeout_exceptions",
        "openai:AsyncOpenAI._build_request",
        "openai:AsyncOpenAI._send_request",
        "openai:AsyncOpenAI._make_status_error_from_response",
    ),
)


def _request_options() -> Any:
    from openai._base_client import make_request_options

    return make_request_options(security={"bearer_auth": True})


class PreparedPost:
    """The openai SDK's POST to `path`, built once by the SDK and sent with a new JSON body.

    For a client with a plain API key only (no key provider, workload identity, provider
    runtime or custom auth, which change a request per call); `of` returns None otherwise, and
    when the adapter is not fast. The request is built on the first call (in the event loop,
    where the SDK builds it) and again when the client's API key changes.
    """

    def __init__(self, client: Any, path: str) -> None:
        from openai._utils._json import openapi_dumps

        self.client = client
        self.path = path
        self.options = _request_options()
        self.dumps: Callable[[Any], bytes] = openapi_dumps
        self.api_key: str | None = None
        self.headers: list[tuple[bytes, bytes]] | None = None

    @classmethod
    def of(cls, client: Any, path: str = CHAT_COMPLETIONS) -> PreparedPost | None:
        if not ADAPTER.fast:
            return None
        import httpx2

        plain = (
            getattr(client, "_provider_runtime", None) is None
            and getattr(client, "_workload_identity_auth", None) is None
            and getattr(client, "_api_key_provider", None) is None
            and getattr(client, "custom_auth", None) is None
            and isinstance(getattr(client, "_client", None), httpx2.AsyncClient)
        )
        return cls(client, path) if plain else None

    async def _build(self) -> None:
        # in the event loop, as the SDK builds it: some headers name the async library
        from openai._base_client import get_platform
        from openai._models import FinalRequestOptions
        from openai._utils import asyncify

        if self.client._platform is None:
            self.client._platform = await asyncify(get_platform)()
        if self.headers is not None and self.client.api_key == self.api_key:
            return  # built by a call that ran while this one waited
        options = FinalRequestOptions.construct(
            method="post", url=self.path, json_data={}, **self.options
        )
        template = self.client._build_request(options, retries_taken=0)
        self.api_key = self.client.api_key
        self.url = template.url
        self.headers = [(k, v) for k, v in template.headers.raw if k.lower() != b"content-length"]
        self.extensions = template.extensions

    async def send(self, body: dict[str, Any]) -> Any:
        """The answer to `body` (a 2xx httpx2 response), or the SDK's exception for a failure."""
        import httpx2
        from openai import APIConnectionError, APITimeoutError, OpenAIError
        from openai._httpx2 import request_exceptions, status_exceptions, timeout_exceptions

        if self.headers is None or self.client.api_key != self.api_key:
            await self._build()
        request = httpx2.Request(
            "POST",
            self.url,
            headers=self.headers,
            content=self.dumps(body),
            # a copy per request, as the SDK builds it: request hooks may change the timeouts
            extensions={
                k: dict(v) if isinstance(v, dict) else v for k, v in self.extensions.items()
            },
        )
        try:
            response: httpx2.Response = await self.client._send_request(request, stream=False)
        except timeout_exceptions() as error:
            raise APITimeoutError(request=request) from error
        except OpenAIError:
            raise
        except request_exceptions() as error:
            raise APIConnectionError(request=request) from error
        try:
            response.raise_for_status()
        except status_exceptions() as error:
            if not error.response.is_closed:
                await error.response.aread()
            raise self.client._make_status_error_from_response(error.response) from None
        return response


async def post_chat_completion(client: Any, body: dict[str, Any]) -> Any:
    """The SDK's own POST of a chat completion `body`, the answer as received (an httpx2
    response; status errors raised as the SDK raises them)."""
    import httpx2
    from openai import AsyncStream
    from openai.types.chat import ChatCompletionChunk

    return await client.post(
        CHAT_COMPLETIONS,
        body=body,
        options=_request_options(),
        cast_to=httpx2.Response,
        stream=False,
        stream_cls=AsyncStream[ChatCompletionChunk],
    )


async def parse_chat_completion(client: Any, response: Any, body: dict[str, Any]) -> Any:
    """The SDK's reading of a chat completion answer, as `chat.completions.create` reads it."""
    from openai import AsyncStream
    from openai._models import FinalRequestOptions
    from openai._response import AsyncAPIResponse
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    final = FinalRequestOptions.construct(
        method="post", url=CHAT_COMPLETIONS, json_data=body, **_request_options()
    )
    return await AsyncAPIResponse(
        raw=response,
        cast_to=ChatCompletion,
        client=client,
        stream=False,
        stream_cls=AsyncStream[ChatCompletionChunk],
        options=final,
    ).parse()


def sdk_http_client(client: Any) -> Any:
    """The httpx2 client an openai SDK client sends with (None when the adapter is not fast)."""
    return getattr(client, "_client", None) if ADAPTER.fast else None


__all__ = [
    "ADAPTER",
    "CHAT_COMPLETIONS",
    "PreparedPost",
    "parse_chat_completion",
    "post_chat_completion",
    "sdk_http_client",
]
