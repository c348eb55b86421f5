"""estimateContentChars and the image-estimate resolution, on the upstream test vectors."""

from doctor.core.estimator import estimate_content_chars, resolve_image_token_estimate


def test_content_chars_sum_parts_and_need_parts():
    assert estimate_content_chars({"role": "user", "parts": [{"text": "hi"}, {"inlineData": {}}]}) == 6402
    assert estimate_content_chars({"role": "user"}) == 0


def test_image_estimate_resolution_env_over_settings_over_default():
    assert resolve_image_token_estimate(999, {"QWEN_IMAGE_TOKEN_ESTIMATE": "3000"}) == 3000
    assert resolve_image_token_estimate(1234, {"QWEN_IMAGE_TOKEN_ESTIMATE": "not-a-number"}) == 1234
    assert resolve_image_token_estimate(None, {"QWEN_IMAGE_TOKEN_ESTIMATE": "0"}) == 1600
    assert resolve_image_token_estimate(2000, {}) == 2000
    assert resolve_image_token_estimate(None, {"QWEN_IMAGE_TOKEN_ESTIMATE": " 2.5 "}) == 2.5
