"""What real endpoints send beside the answer: JPEGs named .png, reasoning fields and <think> blocks,
outputs cut at max_tokens, servers that refuse images."""

from __future__ import annotations

import asyncio
import base64
import json

from PIL import Image

from memegauge.config import load_registry

from memegauge.models.spec import ModelRegistry, ModelSpec
from memegauge.engine import Engine, Store
from memegauge.models.openai_backend import OpenAIBackend, image_mime, rejects_images
from memegauge.types import ChatRequest, ImagePart, Message, SamplingParams


def test_mime_type_comes_from_the_bytes(tmp_path):
    jpeg_named_png = tmp_path / "meme.png"
    Image.new("RGB", (8, 8), "red").save(jpeg_named_png, format="JPEG")
    data = jpeg_named_png.read_bytes()
    assert image_mime(data, jpeg_named_png) == "image/jpeg"
    png = tmp_path / "real.jpg"
    Image.new("RGB", (8, 8), "red").save(png, format="PNG")
    assert image_mime(png.read_bytes(), png) == "image/png"
    backend = OpenAIBackend(ModelSpec(name="m", backend="openai", model="m", base_url="http://127.0.0.1:9/v1"))
    body = backend._body(ChatRequest(model="m", messages=[Message.user(ImagePart.of(jpeg_named_png), "hi")]))
    url = body["messages"][0]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,") and base64.b64decode(url.split(",", 1)[1]) == data


def test_openai_models_see_images_unless_declared_text_only(tmp_path):
    path = tmp_path / "models.yaml"
    path.write_text("a: {backend: openai, model: a, base_url: http://127.0.0.1:9/v1}\n"
                    "b: {backend: openai, model: b, base_url: http://127.0.0.1:9/v1, vision: false}\n")
    registry = load_registry(path)
    assert registry.get("a").vision is True and registry.get("b").vision is False
    assert registry.get("embedded").vision is False


def test_servers_wording_of_no_image_support_is_recognised():
    for message in ("image input is not supported - hint: you may need to provide the mmproj",
                    "Qwen/Qwen2.5-7B-Instruct is not a multimodal model",
                    "At most 0 image(s) may be provided in one request.",
                    "Invalid content type. image_url is only supported by certain models.",
                    "llama3 does not support images"):
        assert rejects_images(message), message
    for message in ("Rate limit reached", "maximum context length is 4096 tokens", "Invalid image URL"):
        assert not rejects_images(message), message


def test_reasoning_is_kept_apart_and_never_parsed(tmp_path):
    backend = OpenAIBackend(ModelSpec(name="m", backend="openai", model="m", base_url="http://127.0.0.1:9/v1"))
    result = backend._result({"choices": [{"message": {"content": "B", "reasoning_content": "A or B? B."},
                                           "finish_reason": "stop"}]}, "u", 0.1)
    assert result.text == "B" and result.reasoning == "A or B? B."

    from memegauge.models.scripted import register_script
    from memegauge.parse import parse_choice

    register_script("thinker", lambda r: "<think>Option A looks right... no.</think>\nC")
    registry = ModelRegistry({"thinker": ModelSpec(name="thinker", backend="scripted", model="thinker")})
    store = Store(tmp_path / "s.db")
    engine = Engine(store, registry)
    request = ChatRequest(model="thinker", messages=[Message.user("Which?")],
                          params=SamplingParams(max_tokens=50))
    outcome = asyncio.run(engine.chat(request, parse=lambda t: parse_choice(t, False, 4)))
    assert outcome.value == (2,) and outcome.text == "C"
    stored = store.get_call(outcome.record.key)
    assert stored.text == "C" and stored.reasoning == "Option A looks right... no." and stored.finish_reason == "stop"
    assert json.loads(json.dumps(stored.model_dump(mode="json")))["reasoning"]


def test_server_sees_the_true_mime_type_of_a_jpeg_named_png(tmp_path):
    import openai

    from memegauge.testing.server import start_server

    jpeg_named_png = tmp_path / "meme.png"
    Image.new("RGB", (8, 8), "red").save(jpeg_named_png, format="JPEG")
    with start_server() as server:
        path = tmp_path / "models.yaml"
        path.write_text(f"vl: {{backend: openai, model: vl, base_url: {server.base_url}}}\n")
        engine = Engine(Store(tmp_path / "s.db"), load_registry(path))
        request = ChatRequest(model="vl", messages=[Message.user(ImagePart.of(jpeg_named_png), "What is it?")])
        assert asyncio.run(engine.chat(request)).ok
        assert server.stats["images"] == 1 and server.stats["image_mime_mismatch"] == 0
        data = base64.b64encode(jpeg_named_png.read_bytes()).decode()
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        client.chat.completions.create(model="vl", messages=[{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}]}])
        assert server.stats["image_mime_mismatch"] == 1  # what MemeGauge used to send for such files
