"""The cassette's matching rules: what of a model request is compared, and what a mismatch says."""

from __future__ import annotations

from agentctl.domain.cassette import Cassette, Recording, attempt_names, normalised

OLD_DIR, NEW_DIR = "/tmp/agentctl-ws-old", "/tmp/agentctl-ws-new"
OLD = attempt_names(OLD_DIR, "attempt_01OLD")
NEW = attempt_names(NEW_DIR, "attempt_01NEW")


def _request(text: str, **extra: object) -> dict[str, object]:
    return {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": text}],
            "tools": [{"name": "Bash"}], **extra}


def test_headers_ids_metadata_and_system_are_not_compared() -> None:
    recorded = _request(f"work in {OLD_DIR}/repo, home homes/attempt_01OLD",
                        metadata={"user_id": "a"}, system="date 1")
    recorded["messages"][0]["id"] = "msg_1"  # type: ignore[index]
    live = _request(f"work in {NEW_DIR}/repo, home homes/attempt_01NEW",
                    metadata={"user_id": "b"}, system="date 2")
    assert normalised(recorded, OLD) == normalised(live, NEW)


def test_the_model_the_messages_and_the_tools_are_compared() -> None:
    base = normalised(_request("hi"), OLD)
    assert normalised({**_request("hi"), "model": "other"}, OLD) != base
    assert normalised(_request("hello"), OLD) != base
    assert normalised({**_request("hi"), "tools": []}, OLD) != base


def test_a_secret_in_the_live_request_matches_its_redacted_recording() -> None:
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    recorded = _request("token [REDACTED:github-token]")
    assert normalised(recorded, OLD) == normalised(_request(f"token {key}"), NEW)


def test_an_answer_comes_back_with_this_attempts_directory() -> None:
    cassette = Cassette([Recording("/v1/messages", 200, _request("hi"),
                                   f'data: {{"path": "{OLD_DIR}/repo/x.py"}}\n\n')], OLD)
    answer, problem = cassette.answer(_request("hi"), NEW)
    assert problem == "" and answer is not None and f"{NEW_DIR}/repo/x.py" in answer.response
    assert cassette.used == 1


def test_a_request_off_its_recording_gets_no_answer_and_a_diff() -> None:
    cassette = Cassette([Recording("/v1/messages", 200, _request("line one\nline two"), "")],
                        OLD)
    answer, problem = cassette.answer(_request("line one\nline 2"), NEW)
    assert answer is None and problem == cassette.problem
    assert problem.startswith("model request 1 does not match its recording")
    assert '-line two"' in problem and '+line 2"' in problem
    assert "line one" not in [line[1:] for line in problem.splitlines() if line[:1] in "+-"]


def test_a_request_past_the_end_of_the_recording_is_never_answered() -> None:
    cassette = Cassette([Recording("/v1/messages", 200, _request("hi"), "ok")], OLD)
    assert cassette.answer(_request("hi"), NEW)[0] is not None
    answer, problem = cassette.answer(_request("hi"), NEW)
    assert answer is None and "was never recorded" in problem


def test_codex_chunk_ids_and_wall_times_in_tool_output_are_not_compared() -> None:
    recorded = _request("Chunk ID: 467bed\nWall time: 0.0012 seconds\nok")
    live = _request("Chunk ID: 935246\nWall time: 0.0300 seconds\nok")
    assert normalised(recorded, OLD) == normalised(live, NEW)
    assert normalised(_request("Chunk ID: 1\nnot ok"), OLD) != normalised(recorded, OLD)


def test_a_replay_whose_recording_cannot_be_read_answers_no_request() -> None:
    """A worker that cannot load the original's exchanges still plays the replay from a
    cassette, an empty one: the first request is refused, never sent to a live model."""
    from agentctl.services.attempts.pipeline import RunOptions
    from agentctl.services.lifecycle.worker import replay_cassette

    def unreadable(run_id: str) -> Cassette:
        raise OSError(f"the artifacts of {run_id} are gone")

    said: list[str] = []
    for options in (RunOptions(), RunOptions(cassettes=unreadable, progress=said.append)):
        cassette = replay_cassette(options, "run_01ORIGINAL")
        answer, problem = cassette.answer(_request("hi"), NEW)
        assert answer is None and problem.startswith("model request 1 was never recorded")
    assert said == ["the recording of run_01ORIGINAL cannot be read: the artifacts of "
                    "run_01ORIGINAL are gone"]
    loaded = Cassette([Recording("/v1/messages", 200, _request("hi"), "ok")], OLD)
    assert replay_cassette(RunOptions(cassettes=lambda _run: loaded), "run_01X") is loaded


def _gemini(text: str, output: str = "Output: hi\nProcess Group PGID: 4242") -> dict[str, object]:
    return {"contents": [
        {"role": "user", "parts": [{"text": "Today's date is Monday, December 7, 2026 "
                                            f"(formatted according to the user's locale). {text}"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "run_shell_command_17966_0",
                                                      "name": "run_shell_command",
                                                      "args": {"command": "echo hi"}}}]},
        {"role": "user", "parts": [{"functionResponse": {
            "id": "run_shell_command_17966_0", "name": "run_shell_command",
            "response": {"output": output}}}]}],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}],
        "systemInstruction": {"parts": [{"text": "you are gemini"}]}}


STREAM = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"


def test_gemini_contents_and_the_model_its_path_names_are_compared() -> None:
    base = normalised(_gemini("hi"), OLD, path=STREAM)
    assert normalised(_gemini("hello"), OLD, path=STREAM) != base
    assert normalised(_gemini("hi"), OLD, path=STREAM.replace("2.5-pro", "2.5-flash")) != base
    assert normalised(_gemini("hi", "Output: bye\nProcess Group PGID: 4242"), OLD,
                      path=STREAM) != base


def test_gemini_call_ids_the_date_and_the_process_group_are_not_compared() -> None:
    live = _gemini("hi", "Output: hi\nProcess Group PGID: 9911")
    live["contents"][0]["parts"][0]["text"] = (  # type: ignore[index]
        "Today's date is Tuesday, December 8, 2026 (formatted according to the user's locale). hi")
    live["contents"][1]["parts"][0]["functionCall"]["id"] = "run_shell_command_99999_0"  # type: ignore[index]
    assert normalised(live, NEW, path=STREAM) == normalised(_gemini("hi"), OLD, path=STREAM)
